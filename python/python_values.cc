#include "python/python_values.h"

#include <torch/csrc/Size.h>
#include <torch/csrc/jit/python/pybind_utils.h>
#include <torch/extension.h>

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fx_core/io/python_tuples.h"
#include "fx_core/ir/argument.h"
#include "fx_core/runtime/value.h"
#include "python/held_objects.h"

namespace py = pybind11;

namespace fx_sdk {

void raise_value_error(const absl::Status& status) {
  throw py::value_error(std::string(status.message()));
}

namespace {

c10::IValue to_ivalue(py::handle value);

// A container TorchScript cannot type (empty, or mixing types, as pytree
// inputs may: {"x": tensor, "n": 3}), converted item by item as value.h
// holds it: a list, a tuple (a namedtuple as a plain one) or a
// GenericDict. Anything else (a user's object) is held as the Python
// object it is.
c10::IValue untyped_container(py::handle value) {
  std::vector<c10::IValue> items;
  if (PyList_Check(value.ptr()) || PyTuple_Check(value.ptr())) {
    for (py::handle item : value) items.push_back(to_ivalue(item));
    return PyList_Check(value.ptr()) ? fx::make_list(std::move(items))
                                     : fx::make_tuple(std::move(items));
  }
  if (!PyDict_Check(value.ptr())) return python_object_value(value);
  bool all_str = true;
  bool all_int = !py::reinterpret_borrow<py::dict>(value).empty();
  std::vector<c10::IValue> keys;
  for (auto [key, item] : py::reinterpret_borrow<py::dict>(value)) {
    keys.push_back(to_ivalue(key));
    all_str &= keys.back().isString();
    all_int &= keys.back().isInt();
    items.push_back(to_ivalue(item));
  }
  c10::TypePtr key_type = all_str   ? c10::TypePtr(c10::StringType::get())
                          : all_int ? c10::TypePtr(c10::IntType::get())
                                    : c10::TypePtr(c10::AnyType::get());
  c10::impl::GenericDict dict(key_type, c10::AnyType::get());
  for (size_t i = 0; i < keys.size(); ++i) {
    dict.insert_or_assign(std::move(keys[i]), std::move(items[i]));
  }
  return dict;
}

// An instance of a class defined outside builtins and torch (a user's
// class): held as the Python object it is, never typed by TorchScript
// (which would compile the class and hand back a TorchScript object).
bool is_user_object(py::handle value) {
  PyObject* p = value.ptr();
  if (p == Py_None || PyLong_Check(p) || PyFloat_Check(p) ||
      PyComplex_Check(p) || PyUnicode_Check(p) || PyTuple_Check(p) ||
      PyList_Check(p) || PyDict_Check(p) || THPVariable_Check(p)) {
    return false;  // numbers, str and containers (subclasses too) are values
  }
  py::handle type = reinterpret_cast<PyObject*>(Py_TYPE(p));
  py::object module = py::getattr(type, "__module__", py::none());
  if (!PyUnicode_Check(module.ptr())) return false;
  std::string name = module.cast<std::string>();
  return name != "builtins" && name != "torch" && name.rfind("torch.", 0) != 0;
}

c10::IValue to_ivalue(py::handle value) {
  if (is_user_object(value)) return python_object_value(value);
  if (THPSize_Check(value.ptr())) {
    // A torch.Size stays one (TorchScript would make it a plain tuple):
    // `size * 2` and `size[1:]` are torch.Size in Python.
    return fx::make_torch_size(value.cast<std::vector<int64_t>>());
  }
  try {
    return torch::jit::toTypeInferredIValue(value);
  } catch (const std::exception&) {
    return untyped_container(value);
  }
}

}  // namespace

std::vector<c10::IValue> to_ivalues(const py::handle& sequence) {
  std::vector<c10::IValue> values;
  for (const py::handle& value : sequence) values.push_back(to_ivalue(value));
  return values;
}

py::object symint(const std::string& expression) {
  // The package's own copy of tools/torchfx_import.py.
  static py::object* build = new py::object(
      py::module_::import("fx_sdk.torchfx_import").attr("symint"));
  return (*build)(expression);
}

namespace {

// The Python class a named tuple stands for ("torch.return_types.max").
py::object python_class(const std::string& qualified) {
  size_t dot = qualified.rfind('.');
  return py::module_::import(qualified.substr(0, dot).c_str())
      .attr(qualified.substr(dot + 1).c_str());
}

// A collections.namedtuple class (_ASMoutput, a pytree output's class), as
// fx_sdk finds it: one seen in a graph's pytree specs, else by its name.
py::object namedtuple_class(const std::string& qualified) {
  return py::module_::import("fx_sdk").attr("_namedtuple_class")(qualified);
}

// The Python lists made so far for one value, by their c10 list: a list the
// value holds twice (the graph returned `a` and `a += b`'s node, one object)
// is one Python list, as torch.fx returns it.
using ListMemo = std::unordered_map<const void*, py::object>;

py::object convert(c10::IValue value, ListMemo& lists);

py::object list_to_python(c10::IValue value, ListMemo& lists) {
  if (value.isTensorList() || value.isIntList() || value.isDoubleList() ||
      value.isBoolList()) {
    return torch::jit::toPyObject(std::move(value));
  }
  py::list items;
  for (const c10::IValue& e : value.toListRef()) {
    items.append(convert(e, lists));
  }
  return std::move(items);
}

py::object convert(c10::IValue value, ListMemo& lists) {
  if (value.isTuple()) {
    const auto& elements = value.toTupleRef().elements();
    py::tuple items(elements.size());
    for (size_t i = 0; i < elements.size(); ++i) {
      items[i] = convert(elements[i], lists);
    }
    std::string name = fx::python_tuple_name(value);
    if (name.empty()) return std::move(items);
    if (name == fx::kTorchSizeName ||
        name.rfind(fx::kReturnTypesPrefix, 0) == 0) {
      return python_class(name)(items);  // torch.Size, torch.return_types.*
    }
    return namedtuple_class(name)(*items);
  }
  if (value.isList()) {
    const void* key = value.internalToPointer();
    auto found = lists.find(key);
    if (found != lists.end()) return found->second;
    py::object list = list_to_python(value, lists);
    lists.emplace(key, list);
    return list;
  }
  if (value.isGenericDict()) {
    py::dict items;
    for (const auto& entry : value.toGenericDict()) {
      items[convert(entry.key(), lists)] = convert(entry.value(), lists);
    }
    return std::move(items);
  }
  if (py::object held = held_python_object(value)) return held;
  return torch::jit::toPyObject(std::move(value));
}

}  // namespace

py::object to_python(c10::IValue value) {
  ListMemo lists;
  return convert(std::move(value), lists);
}

py::object scalar_to_python(const fx::Argument& arg) {
  using Kind = fx::Argument::Kind;
  switch (arg.kind()) {
    case Kind::kNone:
      return py::none();
    case Kind::kBool:
      return py::bool_(arg.as_bool());
    case Kind::kInt:
      return py::int_(arg.as_int());
    case Kind::kFloat:
      return py::float_(arg.as_float());
    case Kind::kString:
      return py::str(arg.as_string());
    default:
      return py::object();
  }
}

}  // namespace fx_sdk
