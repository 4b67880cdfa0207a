// Python callables in process (bindings.h): what from_torch_fx cannot
// give a kernel or a module kind runs by calling back into Python.
//
//  - A call_function target that resolves to no kernel (a user's function,
//    a torch.fx.wrap'ed helper, a lambda) becomes one of the GraphModule's
//    foreign targets (fx_core/runtime/foreign_targets.h), never a global
//    registry entry: two graphs may hold different functions of one name.
//  - A submodule whose class is no module kind the SDK knows (a user's leaf
//    module) becomes an fx::OpaqueModuleImpl holding the object.
//  - A get_attr target whose value is no tensor (a ParameterList, a
//    submodule handed to a wrapped function, a ProxyableClassMeta instance,
//    a ScriptModule's `_c`) becomes one of the GraphModule's foreign
//    attributes: its value is the object held as it is, so the calls that
//    take it run in Python.
// Either way the entry holds the Python object itself (origin "python"),
// so fx_sdk.to_torch_fx gives back the very same object (_python_objects).
//
// A call takes the GIL, converts the values to Python (tensors shared;
// numbers, strings, None, lists, tuples, dicts, slices, Ellipsis, torch.Size
// and torch.return_types) and the result back; any other Python object is
// held as it is (a capsule), for another Python callable or the output. A
// Python exception becomes FxError naming the callable and carrying the
// exception's type and message (the plan adds the node). A handle's last
// reference may be dropped without the GIL: its deleter takes it (and leaks the
// object while Python finalises).
#include <Python.h>
#include <pybind11/stl.h>
#include <torch/csrc/Size.h>
#include <torch/csrc/jit/python/pybind_utils.h>
#include <torch/extension.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "fx_core/runtime/foreign_targets.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/modules/opaque_module.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "python/bindings.h"
#include "python/held_objects.h"
#include "python/python_values.h"

namespace py = pybind11;
using fx::cat;

namespace fx_sdk {
namespace {

constexpr char kOrigin[] = "python";

// ------------------------------------------------------------ conversions

py::object value_to_python(const c10::IValue& v);

py::object items_to_python(const std::vector<c10::IValue>& items, bool tuple) {
  py::list out;
  for (const c10::IValue& item : items) out.append(value_to_python(item));
  if (tuple) return py::tuple(out);
  return std::move(out);
}

// As bindings.h's to_python, plus what only the runtime holds (slices,
// Ellipsis) anywhere inside containers.
py::object value_to_python(const c10::IValue& v) {
  if (const fx::SliceValue* s = fx::as_slice(v)) {
    PyObject* slice = PySlice_New(value_to_python(s->start).ptr(),
                                  value_to_python(s->stop).ptr(),
                                  value_to_python(s->step).ptr());
    if (slice == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(slice);
  }
  if (fx::is_ellipsis(v)) return py::ellipsis();
  if (py::object held = held_python_object(v)) return held;
  if (v.isTuple() && fx::python_tuple_name(v).empty()) {
    return items_to_python(v.toTupleRef().elements().vec(), true);
  }
  if (v.isList() && !v.isTensorList() && !v.isIntList() && !v.isDoubleList() &&
      !v.isBoolList()) {
    return items_to_python(v.toListRef().vec(), false);
  }
  if (v.isGenericDict()) {
    py::dict out;
    for (const auto& e : v.toGenericDict()) {
      out[value_to_python(e.key())] = value_to_python(e.value());
    }
    return std::move(out);
  }
  return to_python(v);
}

c10::IValue value_from_python(py::handle o, const std::string& what);

std::vector<c10::IValue> items_from_python(py::handle o,
                                           const std::string& what) {
  std::vector<c10::IValue> items;
  for (py::handle item : o) items.push_back(value_from_python(item, what));
  return items;
}

// A tuple subclass torch returns by name (torch.return_types.max), or "".
std::string return_type_name(py::handle o) {
  py::handle type = reinterpret_cast<PyObject*>(Py_TYPE(o.ptr()));
  std::string module = py::str(type.attr("__module__"));
  if (module != "torch.return_types") return "";
  return py::str(type.attr("__name__"));
}

c10::IValue dict_from_python(py::handle o, const std::string& what) {
  c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
  for (auto [key, value] : py::reinterpret_borrow<py::dict>(o)) {
    if (!PyUnicode_Check(key.ptr())) {
      throw fx::FxError(cat(what,
                            " returned a dict with a key that is not "
                            "a str"));
    }
    dict.insert(key.cast<std::string>(), value_from_python(value, what));
  }
  return dict;
}

// torch's value types the runtime has a form for (dtype, device, layout,
// memory_format, qscheme) and complex numbers. Any other object is held as
// it is: TorchScript's type inference would try to compile a user's class.
bool is_torch_scalar_type(py::handle o) {
  if (PyComplex_Check(o.ptr())) return true;
  static PyObject* types = [] {
    py::module_ torch = py::module_::import("torch");
    return py::make_tuple(torch.attr("dtype"), torch.attr("device"),
                          torch.attr("layout"), torch.attr("memory_format"),
                          torch.attr("qscheme"))
        .release()
        .ptr();
  }();
  int found = PyObject_IsInstance(o.ptr(), types);
  if (found < 0) PyErr_Clear();
  return found == 1;
}

// A user's NamedTuple (a tuple class with _fields) as a named tuple of the
// name fx_sdk keeps its class by, so that it comes back as that class.
c10::IValue named_tuple_value(py::handle o, std::vector<c10::IValue> items) {
  py::handle cls = o.get_type();
  std::string name = py::module_::import("fx_sdk")
                         .attr("_namedtuple_name")(cls)
                         .cast<std::string>();
  return fx::make_named_tuple(
      name, cls.attr("_fields").cast<std::vector<std::string>>(),
      std::move(items));
}

// A Python value as the runtime holds it (fx_core/runtime/value.h).
c10::IValue value_from_python(py::handle o, const std::string& what) {
  PyObject* p = o.ptr();
  if (p == Py_None) return c10::IValue();
  if (PyBool_Check(p)) return p == Py_True;
  if (PyLong_Check(p)) return o.cast<int64_t>();
  if (PyFloat_Check(p)) return PyFloat_AsDouble(p);
  if (PyUnicode_Check(p)) return o.cast<std::string>();
  if (THPVariable_Check(p)) return THPVariable_Unpack(p);
  if (THPSize_Check(p)) {
    return fx::make_torch_size(o.cast<std::vector<int64_t>>());
  }
  if (PyTuple_Check(p)) {
    std::string name = return_type_name(o);
    std::vector<c10::IValue> items = items_from_python(o, what);
    if (name.empty() && !PyTuple_CheckExact(p) &&
        py::hasattr(o.get_type(), "_fields")) {
      return named_tuple_value(o, std::move(items));
    }
    return name.empty() ? fx::make_tuple(std::move(items))
                        : fx::make_return_type(name, std::move(items));
  }
  if (PyList_Check(p)) return fx::make_list(items_from_python(o, what));
  if (PyDict_Check(p)) return dict_from_python(o, what);
  if (PySlice_Check(p)) {
    return fx::make_slice(value_from_python(o.attr("start"), what),
                          value_from_python(o.attr("stop"), what),
                          value_from_python(o.attr("step"), what));
  }
  if (p == Py_Ellipsis) return fx::make_ellipsis();
  if (is_torch_scalar_type(o)) {
    try {
      return torch::jit::toTypeInferredIValue(o);  // dtype, device, ...
    } catch (const std::exception&) {
      // held as it is, below
    }
  }
  return python_object_value(o);
}

// "TypeError: message" for a pending Python exception.
std::string python_error_text(py::error_already_set& e) {
  std::string type = py::str(e.type().attr("__name__"));
  std::string message = py::str(e.value());
  return message.empty() ? type : cat(type, ": ", message);
}

// Calls `fn` with runtime values; `what` names it in errors. Takes the GIL.
c10::IValue call_python(const py::object& fn, std::vector<c10::IValue> args,
                        const fx::OpaqueModuleImpl::Kwargs& kwargs,
                        const std::string& what) {
  py::gil_scoped_acquire gil;
  try {
    py::tuple py_args = items_to_python(args, true);
    py::dict py_kwargs;
    for (const auto& [key, value] : kwargs) {
      py_kwargs[py::str(key)] = value_to_python(value);
    }
    return value_from_python(fn(*py_args, **py_kwargs), what);
  } catch (py::error_already_set& e) {
    throw fx::FxError(cat(what, " raised ", python_error_text(e)));
  }
}

// ---------------------------------------------------------------- handles

// The `**kwargs` of a "*args, **kwargs" entry as (name, value) pairs.
fx::OpaqueModuleImpl::Kwargs keyword_arguments(const c10::IValue& kwargs) {
  fx::OpaqueModuleImpl::Kwargs out;
  for (const auto& e : kwargs.toGenericDict()) {
    out.emplace_back(e.key().toStringRef(), e.value());
  }
  return out;
}

fx::OpKernel function_kernel(std::shared_ptr<void> handle,
                             const std::string& target) {
  std::string what = cat("Python callable '", target, "'");
  return [handle = std::move(handle), what](fx::OpArgs& a) -> c10::IValue {
    fx::OpaqueModuleImpl::Kwargs kwargs = keyword_arguments(a[1]);
    return call_python(object_of(handle.get()), fx::sequence_elements(a[0]),
                       kwargs, what);
  };
}

// A call_method target nothing else runs: Python's getattr(self, target)
// called with the rest (a user object's __call__, a method of a value only
// Python holds).
fx::OpKernel method_kernel(const std::string& target) {
  std::string what = cat("Python method '", target, "'");
  return [target, what](fx::OpArgs& a) -> c10::IValue {
    std::vector<c10::IValue> args = fx::sequence_elements(a[0]);
    if (args.empty()) throw fx::FxError(cat(what, " called without self"));
    fx::OpaqueModuleImpl::Kwargs kwargs = keyword_arguments(a[1]);
    py::gil_scoped_acquire gil;
    py::object bound;
    try {
      bound = value_to_python(args[0]).attr(target.c_str());
    } catch (py::error_already_set& e) {
      throw fx::FxError(cat(what, ": ", python_error_text(e)));
    }
    args.erase(args.begin());
    return call_python(bound, std::move(args), kwargs, what);
  };
}

// A target some node calls with a Python object and others maybe with
// tensors: Python (`python`) when an argument is a held object, the SDK's
// kernel otherwise (TensorPair.add beside Tensor.add in one graph,
// getattr(pair, 'left')).
fx::OpKernel dispatching_kernel(fx::Opcode op, const std::string& target,
                                fx::OpKernel python) {
  const fx::OpDef& builtin = fx::OpRegistry::global().get(op, target);
  return [&builtin, python](fx::OpArgs& a) -> c10::IValue {
    std::vector<c10::IValue> args = fx::sequence_elements(a[0]);
    for (const c10::IValue& arg : args) {
      if (is_python_object(arg)) return python(a);
    }
    fx::OpaqueModuleImpl::Kwargs kwargs = keyword_arguments(a[1]);
    return fx::call_op(builtin, std::move(args), kwargs);
  };
}

std::string class_name(const py::object& module) {
  py::gil_scoped_acquire gil;
  py::handle type = module.get_type();
  return cat(py::str(type.attr("__module__")).cast<std::string>(), ".",
             py::str(type.attr("__qualname__")).cast<std::string>());
}

// How opaque modules of origin "python" are called, copied and trained.
std::shared_ptr<const fx::OpaqueModuleImpl::Behaviour> module_behaviour() {
  static const auto* behaviour = [] {
    auto* b = new std::shared_ptr<fx::OpaqueModuleImpl::Behaviour>(
        std::make_shared<fx::OpaqueModuleImpl::Behaviour>());
    (*b)->origin = kOrigin;
    (*b)->call = [](void* handle, std::vector<c10::IValue> args,
                    const fx::OpaqueModuleImpl::Kwargs& kwargs) {
      const py::object& module = object_of(handle);
      return call_python(module, std::move(args), kwargs,
                         cat("Python module ", class_name(module)));
    };
    (*b)->copy = [](void* handle) {
      py::gil_scoped_acquire gil;
      return python_handle(
          py::module_::import("copy").attr("deepcopy")(object_of(handle)));
    };
    (*b)->train = [](void* handle, bool on) {
      py::gil_scoped_acquire gil;
      object_of(handle).attr("train")(on);
    };
    return b;
  }();
  return *behaviour;
}

// ------------------------------------------------------------ from Python

std::string repr(PyObject* object) {
  return py::repr(py::handle(object)).cast<std::string>();
}

// The Python object each target name stands for; ValueError when a name
// that needs one stands for two.
std::unordered_map<std::string, PyObject*> objects_by_name(
    const std::unordered_map<PyObject*, std::string>& function_names) {
  std::unordered_map<std::string, PyObject*> by_name;
  for (const auto& [object, name] : function_names) {
    auto [it, added] = by_name.emplace(name, object);
    if (added || fx::OpRegistry::global().resolve(fx::Opcode::kCallFunction,
                                                  name) != nullptr) {
      continue;
    }
    throw py::value_error(
        cat("call_function target '", name, "' names two different objects, ",
            repr(it->second), " and ", repr(object),
            ": the SDK's graph cannot tell them apart (give them distinct "
            "names)"));
  }
  return by_name;
}

// A placeholder annotated with a user's class ("__main__.TensorPair"), not
// a torch type, a builtin or a typing construct: its value is a Python
// object.
bool annotated_with_user_class(const fx::Node& n) {
  if (n.op() != fx::Opcode::kPlaceholder || n.type().empty()) return false;
  std::string text = n.type_text();
  return text.find('.') != std::string::npos && text.rfind("torch.", 0) != 0 &&
         text.rfind("typing.", 0) != 0 && text.find('[') == std::string::npos;
}

// True when an argument of `n` is one of `nodes`.
bool takes_any(const fx::Node& n,
               const std::unordered_set<const fx::Node*>& nodes) {
  for (const fx::Argument& a : n.args()) {
    if (a.is_node() && nodes.count(a.as_node()) > 0) return true;
  }
  return false;
}

// The nodes whose value may be a Python object: placeholders of a user's
// class, get_attr nodes of attributes that are Python objects, what Python
// callables return, and what calls taking such values return.
std::unordered_set<const fx::Node*> python_valued(
    const fx::Graph& graph, const fx::ForeignTargets& targets) {
  std::unordered_set<const fx::Node*> found;
  for (const fx::Node* n : graph.nodes()) {
    bool python = annotated_with_user_class(*n) ||
                  (n->op() == fx::Opcode::kGetAttr &&
                   targets.find_attribute(n->target()) != nullptr) ||
                  (n->op() == fx::Opcode::kCallFunction &&
                   targets.find(n->op(), n->target()) != nullptr) ||
                  ((n->op() == fx::Opcode::kCallMethod ||
                    n->op() == fx::Opcode::kCallFunction) &&
                   takes_any(*n, found));
    if (python) found.insert(n);
  }
  return found;
}

// An attribute read (getattr(x, 'a')) of a node's value: any value may be
// a Python object at run time (an input of a user's class no annotation
// says), and reading one costs little, so Python reads it when it is one.
bool reads_an_attribute(const fx::Node& n) {
  return n.op() == fx::Opcode::kCallFunction &&
         n.target() == "builtins.getattr" && !n.args().empty() &&
         n.args()[0].is_node();
}

// Targets with a kernel that some node calls with a Python object (or
// reads an attribute with), and call_method targets nothing else runs:
// Python runs them (getattr(self, name) for a method, the target's object
// for a function).
void add_python_dispatch(
    const fx::Graph& graph,
    const std::unordered_map<std::string, PyObject*>& by_name,
    fx::ForeignTargets& targets) {
  std::unordered_set<const fx::Node*> python = python_valued(graph, targets);
  for (const fx::Node* n : graph.nodes()) {
    bool method = n->op() == fx::Opcode::kCallMethod;
    if ((!method && n->op() != fx::Opcode::kCallFunction) ||
        targets.find(n->op(), n->target()) != nullptr) {
      continue;
    }
    bool known =
        fx::OpRegistry::global().resolve(n->op(), n->target()) != nullptr;
    if (known && !takes_any(*n, python) && !reads_an_attribute(*n)) continue;
    std::shared_ptr<void> handle;
    fx::OpKernel python_kernel;
    if (method) {
      handle = python_handle(py::str(n->target()));
      python_kernel = method_kernel(n->target());
    } else {
      auto it = by_name.find(n->target());
      if (it == by_name.end()) continue;
      handle = python_handle(it->second);
      python_kernel = function_kernel(handle, n->target());
    }
    targets.add(n->op(), n->target(), "*args, **kwargs",
                known ? dispatching_kernel(n->op(), n->target(), python_kernel)
                      : python_kernel,
                handle, kOrigin);
  }
}

void add_python_functions(
    const fx::Graph& graph,
    const std::unordered_map<PyObject*, std::string>& function_names,
    fx::ForeignTargets& targets) {
  std::unordered_map<std::string, PyObject*> by_name =
      objects_by_name(function_names);
  for (const fx::Node* n : graph.nodes()) {
    if (n->op() != fx::Opcode::kCallFunction ||
        targets.find(n->op(), n->target()) != nullptr ||
        fx::OpRegistry::global().resolve(n->op(), n->target()) != nullptr) {
      continue;
    }
    auto it = by_name.find(n->target());
    if (it == by_name.end()) continue;
    std::shared_ptr<void> handle = python_handle(it->second);
    targets.add(n->op(), n->target(), "*args, **kwargs",
                function_kernel(handle, n->target()), handle, kOrigin);
  }
}

// What a Python object is, for messages: its class's qualified name.
std::string type_name(py::handle object) {
  py::handle type = reinterpret_cast<PyObject*>(Py_TYPE(object.ptr()));
  return cat(py::str(type.attr("__module__")).cast<std::string>(), ".",
             py::str(type.attr("__qualname__")).cast<std::string>());
}

// A foreign attribute holding `object` (origin "python"): its value is the
// object held as it is; a copy is copy.deepcopy's (with the GIL).
fx::ForeignAttribute python_attribute(std::string path, py::handle object) {
  fx::ForeignAttribute a;
  a.path = std::move(path);
  a.handle = python_handle(object);
  a.value = held_value(a.handle);
  a.origin = kOrigin;
  a.description = type_name(object);
  a.copy = [](const fx::ForeignAttribute& from) {
    py::gil_scoped_acquire gil;
    try {
      return python_attribute(from.path,
                              py::module_::import("copy").attr("deepcopy")(
                                  object_of(from.handle.get())));
    } catch (py::error_already_set& e) {
      throw fx::FxError(cat("deepcopy: attribute '", from.path, "' (",
                            from.description, ") raised ",
                            python_error_text(e)));
    }
  };
  return a;
}

// Each (path, object) of `attributes` (get_attr targets whose values are
// no tensors) as a foreign attribute.
void add_python_attributes(py::handle attributes, fx::ForeignTargets& targets) {
  for (py::handle item : attributes) {
    auto entry = py::reinterpret_borrow<py::tuple>(item);
    std::string path = entry[0].cast<std::string>();
    try {
      targets.add_attribute(python_attribute(path, entry[1]));
    } catch (const fx::FxError& e) {
      throw py::value_error(cat("attribute '", path, "': ", e.what()));
    }
  }
}

void add_python_modules(py::handle opaque_modules,
                        fx::GraphModule::AttributeMap& modules) {
  for (py::handle item : opaque_modules) {
    auto entry = py::reinterpret_borrow<py::tuple>(item);
    std::string path = entry[0].cast<std::string>();
    py::object module = entry[1];
    std::string type = entry[2].cast<std::string>();
    fx::GraphModule::Attribute attribute;
    try {
      attribute.module = std::make_shared<fx::OpaqueModuleImpl>(
          type, python_handle(module), module_behaviour(),
          module.attr("training").cast<bool>());
    } catch (const fx::FxError& e) {
      throw py::value_error(cat("module '", path, "': ", e.what()));
    }
    modules.emplace_back(std::move(path), std::move(attribute));
  }
}

// fx_sdk._C._add_python_function(gm, name, fn): the graph API made a
// call_function node calling `fn` by `name`; unless a kernel has that name,
// gm calls `fn` for it from its next recompile(). ValueError when `name`
// already stands for another object in gm.
void add_python_function(fx::GraphModule& gm, const std::string& name,
                         py::handle fn) {
  if (fx::OpRegistry::global().resolve(fx::Opcode::kCallFunction, name)) {
    return;
  }
  const fx::ForeignTarget* known =
      gm.foreign_targets().find(fx::Opcode::kCallFunction, name);
  if (known != nullptr) {
    if (known->origin == kOrigin && object_of(known->handle.get()).is(fn)) {
      return;
    }
    throw py::value_error(cat("call_function target '", name,
                              "' already stands for another object "
                              "in this graph: ",
                              repr(fn.ptr()),
                              " cannot be called by that name"));
  }
  std::shared_ptr<void> handle = python_handle(fn);
  gm.mutable_foreign_targets().add(
      fx::Opcode::kCallFunction, name, "*args, **kwargs",
      function_kernel(handle, name), handle, kOrigin);
}

// ------------------------------------------------------------- to Python

// fx_sdk._C._python_function(gm, name): the Python function gm calls for
// the call_function target `name`, or None.
py::object python_function(const fx::GraphModule& gm, const std::string& name) {
  const fx::ForeignTarget* t =
      gm.foreign_targets().find(fx::Opcode::kCallFunction, name);
  if (t == nullptr || t->origin != kOrigin) return py::none();
  return object_of(t->handle.get());
}

// The Python attributes gm's get_attr nodes read (not its tensors), as
// [(path, object)] in graph order.
py::list read_attributes(const fx::GraphModule& gm) {
  py::list out;
  std::unordered_set<std::string> seen;
  const fx::ForeignTargets& foreign = gm.foreign_targets();
  for (const fx::Node* n : gm.graph().nodes()) {
    if (n->op() != fx::Opcode::kGetAttr || !seen.insert(n->target()).second) {
      continue;
    }
    const fx::ForeignAttribute* a = foreign.find_attribute(n->target());
    if (a != nullptr && a->origin == kOrigin &&
        !gm.get_attr(n->target()).defined()) {
      out.append(py::make_tuple(a->path, object_of(a->handle.get())));
    }
  }
  return out;
}

// fx_sdk._C._python_objects(gm): the Python objects gm holds, as
// ([(path, module)], {target: function}, [(path, attribute)]), for
// to_torch_fx; the attributes are those gm's graph reads.
py::tuple python_objects(const fx::GraphModule& gm) {
  py::list modules;
  for (const auto& [path, attribute] : gm.referenced_attributes()) {
    auto* opaque =
        dynamic_cast<const fx::OpaqueModuleImpl*>(attribute.module.get());
    if (opaque != nullptr && opaque->origin() == kOrigin) {
      modules.append(py::make_tuple(path, object_of(opaque->handle().get())));
    }
  }
  py::dict functions;
  for (const fx::ForeignTarget* t : gm.foreign_targets().entries()) {
    if (t->origin == kOrigin && t->def.op == fx::Opcode::kCallFunction) {
      functions[py::str(t->def.target)] = object_of(t->handle.get());
    }
  }
  return py::make_tuple(modules, functions, read_attributes(gm));
}

// fx_sdk._C._module_kind_known(type): whether the SDK builds modules of
// the Python class `type` from a config (opaque kinds do not count).
bool module_kind_known(const std::string& type) {
  const fx::ModuleKind* kind = fx::ModuleRegistry::global().find(type);
  return kind != nullptr && !fx::is_opaque_module_kind(*kind);
}

}  // namespace

void add_python_parts(
    const fx::Graph& graph,
    const std::unordered_map<PyObject*, std::string>& function_names,
    py::handle opaque_modules, py::handle attributes,
    fx::InProcessParts& parts) {
  add_python_attributes(attributes, parts.targets);
  add_python_functions(graph, function_names, parts.targets);
  add_python_dispatch(graph, objects_by_name(function_names), parts.targets);
  add_python_modules(opaque_modules, parts.modules);
}

void bind_python_callables(py::module_& m) {
  m.def("_python_objects", &python_objects, py::arg("gm"));
  m.def("_module_kind_known", &module_kind_known, py::arg("type"));
  m.def("_add_python_function", &add_python_function, py::arg("gm"),
        py::arg("name"), py::arg("fn"));
  m.def("_python_function", &python_function, py::arg("gm"), py::arg("name"));
}

}  // namespace fx_sdk
