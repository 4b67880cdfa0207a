// fx_sdk._C._from_torch_fx: a torch.fx Graph read straight into the SDK's
// Graph (fx_sdk.from_torch_fx's fast path; bindings.h), without the
// interchange format's JSON text in between; and _attribute_nodes, the
// graph's call_module and get_attr nodes. Both walk torch.fx's node list
// in C (as iterating graph.nodes would) and read a node's attributes by
// interned names.
//
// Each torch.fx Node becomes the fx::Node the fx-graph reader
// (fx_core/format/graph_json_reader.cc) would make of what
// tools/torchfx_export.py writes for it: the same name, op, target (a
// call_function's as its qualified name), args and kwargs (torch.fx's values as
// argument.h holds them), type, and meta: the entries the format can hold,
// is_wrapped as the reader infers it. The modules, weight_kinds and pytree (the
// graph's _PyTreeCodeGen info) sections, still in the format's JSON, go through
// that reader so that they are read in one place.
//
// Python callables the caller passes give what needs Python:
// target_name(function) -> qualified name, type_name(type) -> the type as
// code spells it, node_meta(node) -> the node's representable meta (raw
// values; tensor_meta as a dict of shape, dtype, stride, requires_grad,
// memory_format). target_name and type_name are called once per distinct
// object; named_tuple_info(value) -> (class name, fields, fields_repr) names
// a NamedTuple value's class (argument.h) and raises ValueError for one the
// SDK cannot print as torch.fx does. A value the SDK cannot hold raises
// ValueError naming the node.
// A call_function target with no kernel and the `opaque_modules` given
// ((path, module, type name): submodules of no kind the SDK knows) become
// the GraphModule's Python callables, the `python_attributes` ((path,
// object): get_attr targets that are no tensors) its foreign attributes
// (python_callables.cc).
#include <Python.h>
#include <pybind11/stl.h>
// torch.Tensor <-> at::Tensor for the weights (pybind11's casters must be the
// same in every file that binds a type).
#include <torch/extension.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

#include "absl/status/status.h"
#include "fx_core/format/graph_json.h"
#include "fx_core/ir/argument.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/support/error.h"
#include "fx_core/symbolic/shape_env.h"
#include "python/bindings.h"
#include "python/node_names.h"
#include "python/python_values.h"
#include "python/released_gil.h"

namespace py = pybind11;

namespace fx_sdk {
namespace {

// Strings for Python objects, each asked for once (the objects are kept
// alive so that their addresses stay theirs).
class NameCache {
 public:
  explicit NameCache(py::object name_of) : name_of_(std::move(name_of)) {}
  const std::string& get(py::handle object) {
    auto it = names_.find(object.ptr());
    if (it == names_.end()) {
      keep_.append(object);
      it = names_.emplace(object.ptr(), name_of_(object).cast<std::string>())
               .first;
    }
    return it->second;
  }
  // Every object asked for so far -> its string.
  const std::unordered_map<PyObject*, std::string>& names() const {
    return names_;
  }

 private:
  py::object name_of_;
  py::list keep_;
  std::unordered_map<PyObject*, std::string> names_;
};

py::object get(py::handle object, PyObject* name) {
  PyObject* value = PyObject_GetAttr(object.ptr(), name);
  if (value == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(value);
}

// `str` as UTF-8; ValueError saying "<what> is not a str" or that it
// cannot be encoded (a lone surrogate).
std::string utf8(py::handle str, const std::string& what) {
  if (!PyUnicode_Check(str.ptr())) {
    throw py::value_error(what + " is not a str");
  }
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(str.ptr(), &size);
  if (data == nullptr) {
    PyErr_Clear();
    throw py::value_error(what + " cannot be encoded as UTF-8 (" +
                          py::repr(str).cast<std::string>() + ")");
  }
  return std::string(data, size);
}

// Calls fn(node) for each node of a torch.fx.Graph in order, as iterating
// graph.nodes would (erased nodes skipped), walking the list in C.
template <typename Fn>
void for_each_node(py::handle graph, Fn&& fn) {
  const NodeNames& n = node_names();
  py::object root = get(graph, n.root);
  for (py::object node = get(root, n.next); !node.is(root);
       node = get(node, n.next)) {
    if (!PyObject_IsTrue(get(node, n.erased).ptr())) fn(node);
  }
}

class TorchFxReader {
 public:
  TorchFxReader(py::object target_name, py::object type_name,
                py::object node_meta, py::dict node_types,
                py::object named_tuple_info)
      : targets_(std::move(target_name)),
        types_(std::move(type_name)),
        node_meta_(std::move(node_meta)),
        node_types_(std::move(node_types)),
        named_tuple_info_(std::move(named_tuple_info)) {
    if (named_tuple_info_.is_none()) named_tuple_info_ = py::object();
    py::module_ torch = py::module_::import("torch");
    node_class_ = py::module_::import("torch.fx").attr("Node");
    dtype_ = torch.attr("dtype");
    device_ = torch.attr("device");
    memory_format_ = torch.attr("memory_format");
    layout_ = torch.attr("layout");
    qscheme_ = torch.attr("qscheme");
    symint_types_ = py::make_tuple(
        torch.attr("SymIntNode"),
        py::module_::import("torch.fx.experimental.symbolic_shapes")
            .attr("PySymInt"));
  }

  // Reads every node of `graph` (a torch.fx.Graph) into `out`.
  // `annotations` are the placeholders' annotations as gm.code spells them
  // (parameter -> annotation), `return_annotation` the output's.
  void read(py::handle graph, const py::dict& annotations,
            const std::string& return_annotation, fx::Graph& out) {
    std::vector<std::pair<py::handle, fx::Node*>> made;
    for_each_node(graph, [&](py::handle node) {
      made.emplace_back(node,
                        read_node(node, annotations, return_annotation, out));
    });
    // Meta may name any node of the graph, one defined later too.
    for (auto& [node, to] : made) read_node_meta(node, *to);
  }

  // The call_function target objects read, with their names.
  const std::unordered_map<PyObject*, std::string>& functions() const {
    return targets_.names();
  }

 private:
  // The node made (its meta is read later: read_node_meta).
  fx::Node* read_node(py::handle node, const py::dict& annotations,
                      const std::string& return_annotation, fx::Graph& out) {
    const NodeNames& n = node_names();
    std::string name = utf8(get(node, n.name), "a node's name");
    std::string op_name = utf8(get(node, n.op), "a node's op");
    std::optional<fx::Opcode> op = fx::parse_opcode(op_name);
    if (!op) {
      throw py::value_error(where(name) + ": unknown op '" + op_name + "'");
    }
    py::object target_object = get(node, n.target);
    if (*op == fx::Opcode::kCallFunction &&
        !PyCallable_Check(target_object.ptr())) {
      throw py::value_error(where(name) + " (call_function): its target is a " +
                            std::string(Py_TYPE(target_object.ptr())->tp_name) +
                            " (" + py::repr(target_object).cast<std::string>() +
                            "), not a callable");
    }
    std::string target = *op == fx::Opcode::kCallFunction
                             ? targets_.get(target_object)
                             : utf8(target_object, where(name) + "'s target");
    fx::Node::Args args;
    py::object py_args = get(node, n.args);
    for (py::handle a : py_args) {
      args.push_back(from_python(a, name, "args"));
    }
    fx::Node::Kwargs kwargs;
    py::object py_kwargs = get(node, n.kwargs);
    if (!PyDict_Check(py_kwargs.ptr())) {
      throw py::value_error(where(name) + ": kwargs is not a dict");
    }
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(py_kwargs.ptr(), &pos, &key, &value)) {
      kwargs.emplace_back(utf8(key, where(name) + " kwargs key"),
                          from_python(value, name, "kwargs"));
    }
    std::string type =
        node_type(node, *op, target, annotations, return_annotation);
    fx::Node* made = out.create_node(*op, target, std::move(args),
                                     std::move(kwargs), name, type);
    if (!type.empty()) {
      // The code's form of an annotation does not always say how the graph
      // prints it (repr of the type: 'torch.Tensor', TensorType[(1, Dyn)]).
      py::object type_object = get(node, n.type);
      if (!type_object.is_none()) made->set_type(type, types_.get(type_object));
    }
    if (made->name() != name) {
      throw py::value_error(where(name) +
                            ": not a legal node name (the SDK would "
                            "name it '" +
                            std::string(made->name()) + "')");
    }
    nodes_.emplace(node.ptr(), made);
    return made;
  }

  // The node's meta, and is_wrapped as the format's reader infers it.
  void read_node_meta(py::handle node, fx::Node& made) {
    const NodeNames& n = node_names();
    py::object py_meta = get(node, n.meta);
    std::string name(made.name());
    fx::ArgumentDict meta = read_meta(node, py_meta, name);
    if (made.op() == fx::Opcode::kCallFunction) {
      PyObject* wrapped =
          PyDict_Check(py_meta.ptr())
              ? PyDict_GetItemWithError(py_meta.ptr(), n.is_wrapped)
              : nullptr;
      if (wrapped == nullptr && PyErr_Occurred()) {
        throw py::error_already_set();
      }
      bool is_wrapped = wrapped != nullptr && PyObject_IsTrue(wrapped) == 1;
      // Said where the format's reader would infer otherwise: functions
      // outside torch are wrapped unless meta says not, others (a builtin
      // torch.fx.wrap('getattr') made so) only when it says so.
      if (fx::is_wrapped_by_default(made.target()) || is_wrapped) {
        meta.emplace_back("is_wrapped", fx::Argument(is_wrapped));
      }
    }
    if (!meta.empty()) made.mutable_meta() = std::move(meta);
  }

  static std::string where(const std::string& name) {
    return "node '" + name + "'";
  }

  // As tools/torchfx_export.py's graph_document: a placeholder's and the
  // output's annotation as the code spells it, others from node.type.
  std::string node_type(py::handle node, fx::Opcode op,
                        const std::string& target, const py::dict& annotations,
                        const std::string& return_annotation) {
    if (op == fx::Opcode::kPlaceholder) {
      if (PyDict_Size(annotations.ptr()) == 0) return std::string();
      py::str key(target);
      return annotations.contains(key) ? annotations[key].cast<std::string>()
                                       : std::string();
    }
    if (op == fx::Opcode::kOutput) return return_annotation;
    py::object type = get(node, node_names().type);
    if (type.is_none()) return std::string();
    py::str name(get(node, node_names().name));
    return node_types_.contains(name) ? node_types_[name].cast<std::string>()
                                      : types_.get(type);
  }

  fx::ArgumentDict read_meta(py::handle node, const py::object& py_meta,
                             const std::string& name) {
    fx::ArgumentDict meta;
    if (py::len(py_meta) == 0) return meta;
    for (auto [key, value] : py::dict(node_meta_(node))) {
      std::string k = key.cast<std::string>();
      try {
        meta.emplace_back(k, from_python(value, name, "meta '" + k + "'"));
      } catch (const py::value_error&) {
        // Left out, as other values meta holds that the SDK cannot (a
        // node of another graph, one erased).
      }
    }
    return meta;
  }

  // A value of node `name`'s `part` (args, kwargs, a meta entry) as
  // argument.h holds it; raises ValueError naming both when the SDK cannot.
  fx::Argument from_python(py::handle value, const std::string& name,
                           const std::string& part) {
    PyObject* v = value.ptr();
    if (v == Py_None) return fx::Argument();
    if (PyBool_Check(v)) return v == Py_True;
    if (PyLong_Check(v)) {
      int overflow = 0;
      int64_t i = PyLong_AsLongLongAndOverflow(v, &overflow);
      if (overflow != 0) {
        throw py::value_error(where(name) + " " + part +
                              ": the int does not fit in 64 bits");
      }
      return i;
    }
    if (PyFloat_Check(v)) return PyFloat_AsDouble(v);
    if (PyUnicode_Check(v)) return utf8(value, where(name) + " " + part);
    if (Py_IS_TYPE(v, reinterpret_cast<PyTypeObject*>(node_class_.ptr())) ||
        py::isinstance(value, node_class_)) {
      auto it = nodes_.find(v);
      if (it == nodes_.end()) {
        throw py::value_error(where(name) + " " + part + ": node '" +
                              py::str(value.attr("name")).cast<std::string>() +
                              "' is not defined before");
      }
      return it->second;
    }
    if (PyTuple_Check(v) && !PyTuple_CheckExact(v) &&
        PyObject_HasAttrString(reinterpret_cast<PyObject*>(Py_TYPE(v)),
                               "_fields") == 1) {
      return named_tuple_from_python(value, name, part);
    }
    if (PyTuple_Check(v) || PyList_Check(v)) {
      fx::ArgumentList items;
      items.reserve(py::len(value));
      for (py::handle item : value) {
        items.push_back(from_python(item, name, part));
      }
      // torch.Size is a tuple; a NamedTuple too (as the format writes it).
      return PyList_Check(v) ? fx::Argument::list(std::move(items))
                             : fx::Argument::tuple(std::move(items));
    }
    if (PyDict_Check(v)) return dict_from_python(value, name, part);
    if (PySlice_Check(v)) {
      return fx::Argument::slice(from_python(value.attr("start"), name, part),
                                 from_python(value.attr("stop"), name, part),
                                 from_python(value.attr("step"), name, part));
    }
    if (v == Py_Ellipsis) return fx::Argument::ellipsis();
    if (PyObject_IsInstance(v, symint_types_.ptr()) == 1) {
      return fx::Argument::symint(py::str(value).cast<std::string>());
    }
    return torch_value(value, where(name) + " " + part);
  }

  // A NamedTuple (a tuple whose class has _fields): its class as
  // named_tuple_info names it (fx_sdk keeps the class by that name).
  fx::Argument named_tuple_from_python(py::handle value,
                                       const std::string& name,
                                       const std::string& part) {
    if (!named_tuple_info_) {
      throw py::value_error(where(name) + " " + part +
                            ": a NamedTuple needs fx_sdk's named_tuple_info");
    }
    py::tuple info;
    try {
      info = named_tuple_info_(value);
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_ValueError)) throw;
      throw py::value_error(where(name) + " " + part + ": " +
                            py::str(e.value()).cast<std::string>());
    }
    auto type = std::make_shared<fx::NamedTupleType>();
    type->name = info[0].cast<std::string>();
    type->fields = info[1].cast<std::vector<std::string>>();
    type->fields_repr = info[2].cast<bool>();
    fx::ArgumentList items;
    for (py::handle item : value)
      items.push_back(from_python(item, name, part));
    try {
      return fx::Argument::named_tuple(std::move(type), std::move(items));
    } catch (const fx::FxError& e) {
      throw py::value_error(where(name) + " " + part + ": " + e.what());
    }
  }

  // A dict; one whose keys are not all str keeps them (bool, int, float).
  fx::Argument dict_from_python(py::handle value, const std::string& name,
                                const std::string& part) {
    fx::KeyedArgumentDict items;
    for (auto [key, item] : py::reinterpret_borrow<py::dict>(value)) {
      PyObject* k = key.ptr();
      if (!PyUnicode_Check(k) && !PyBool_Check(k) && !PyLong_Check(k) &&
          !PyFloat_Check(k)) {
        throw py::value_error(
            where(name) + " " + part + ": a dict key of type " +
            py::str(key.get_type().attr("__name__")).cast<std::string>() +
            " (keys must be str, bool, int or float)");
      }
      items.emplace_back(from_python(key, name, part),
                         from_python(item, name, part));
    }
    return fx::Argument::keyed_dict(std::move(items));
  }

  fx::Argument torch_value(py::handle value, const std::string& where) {
    if (py::isinstance(value, dtype_)) {
      return fx::Argument::dtype(py::str(value).cast<std::string>());
    }
    if (py::isinstance(value, device_)) {
      return fx::Argument::device(py::str(value).cast<std::string>());
    }
    if (py::isinstance(value, memory_format_)) {
      return fx::Argument::memory_format(py::str(value).cast<std::string>());
    }
    if (py::isinstance(value, layout_)) {
      return fx::Argument::layout(py::str(value).cast<std::string>());
    }
    if (py::isinstance(value, qscheme_)) {
      return fx::Argument::qscheme(py::str(value).cast<std::string>());
    }
    throw py::value_error(
        where + ": cannot encode a " +
        py::str(value.get_type().attr("__name__")).cast<std::string>());
  }

  NameCache targets_;
  NameCache types_;
  py::object node_meta_;
  // Node name -> its type as the code spells it, for nodes other than
  // placeholders and the output.
  py::dict node_types_;
  // value -> (class name, fields, fields_repr) for a NamedTuple value.
  py::object named_tuple_info_;
  py::object node_class_, dtype_, device_, memory_format_, layout_, qscheme_;
  py::tuple symint_types_;  // torch.SymIntNode, PySymInt
  std::unordered_map<PyObject*, fx::Node*> nodes_;
};

// The modules, weight_kinds and pytree sections of the format, read by the
// format's own reader (as a document whose graph is only an output node;
// the pytree section gives that graph its codegen).
fx::GraphFile read_modules(const std::string& modules_json,
                           const std::string& weight_kinds_json,
                           const std::string& pytree_json) {
  std::string document =
      "{\"format\": \"fx-graph\", \"version\": 1, \"nodes\": [{\"name\": "
      "\"output\", \"op\": \"output\", \"target\": \"output\", \"args\": "
      "[null], \"kwargs\": {}}], \"modules\": " +
      modules_json + ", \"weight_kinds\": " + weight_kinds_json +
      (pytree_json.empty() ? "" : ", \"pytree\": " + pytree_json) + "}";
  absl::StatusOr<fx::GraphFile> file =
      fx::parse_graph_json(document, "<memory>");
  if (!file.ok()) raise_value_error(file.status());
  return std::move(*file);
}

std::shared_ptr<fx::GraphModule> from_torch_fx(
    py::handle graph, const py::dict& annotations,
    const std::string& return_annotation, const std::string& modules_json,
    const fx::TensorList& weights, py::object target_name, py::object type_name,
    py::object node_meta,
    const std::vector<std::pair<std::string, int64_t>>& hints,
    const std::vector<std::string>& guards,
    const std::vector<std::string>& printed_guards,
    const std::string& weight_kinds_json, py::handle opaque_modules,
    const std::string& pytree_json, const py::dict& node_types,
    py::handle python_attributes, py::object named_tuple_info,
    py::handle codegen) {
  fx::GraphFile file =
      read_modules(modules_json, weight_kinds_json, pytree_json);
  // The pytree codegen the format's reader made, on the graph read here.
  std::unique_ptr<fx::CodeGen> graph_codegen =
      codegen.is_none() ? file.graph->codegen().clone()
                        : python_codegen(codegen);  // a user's subclass
  file.graph = std::make_unique<fx::Graph>();
  file.graph->set_codegen(std::move(graph_codegen));
  TorchFxReader reader(std::move(target_name), std::move(type_name),
                       std::move(node_meta), node_types,
                       std::move(named_tuple_info));
  reader.read(graph, annotations, return_annotation, *file.graph);
  fx::InProcessParts in_process;  // Python callables (python_callables.cc)
  add_python_parts(*file.graph, reader.functions(), opaque_modules,
                   python_attributes, in_process);
  if (!weights.empty()) file.weights = "in-memory";
  if (!hints.empty() || !guards.empty()) {
    absl::StatusOr<fx::sym::ShapeEnv> env =
        fx::sym::declared_shape_env(hints, guards, printed_guards);
    if (!env.ok()) raise_value_error(env.status());
    file.shape_env = std::make_shared<fx::sym::ShapeEnv>(*std::move(env));
  }
  absl::StatusOr<std::shared_ptr<fx::GraphModule>> gm;
  {
    ReleasedGil released;
    gm = fx::load_graph_module_shared(std::move(file), weights, in_process);
  }
  if (!gm.ok()) raise_value_error(gm.status());
  return *std::move(gm);
}

// The call_module and get_attr nodes of a torch.fx.Graph, in order (the
// nodes whose modules and tensors from_torch_fx passes on).
py::list attribute_nodes(py::handle graph) {
  py::object call_module = py::str("call_module");
  py::object get_attr = py::str("get_attr");
  py::list found;
  for_each_node(graph, [&](py::handle node) {
    py::object op = get(node, node_names().op);
    if (op.equal(call_module) || op.equal(get_attr)) found.append(node);
  });
  return found;
}

}  // namespace

void bind_torch_fx_reader(py::module_& m) {
  m.def("_attribute_nodes", &attribute_nodes, py::arg("graph"));
  m.def("_from_torch_fx", &from_torch_fx, py::arg("graph"),
        py::arg("annotations"), py::arg("return_annotation"),
        py::arg("modules_json"), py::arg("weights"), py::arg("target_name"),
        py::arg("type_name"), py::arg("node_meta"), py::arg("hints"),
        py::arg("guards"),
        py::arg("printed_guards") = std::vector<std::string>{},
        py::arg("weight_kinds_json") = "{}",
        py::arg("opaque_modules") = py::list(), py::arg("pytree_json") = "",
        py::arg("node_types") = py::dict(),
        py::arg("python_attributes") = py::list(),
        py::arg("named_tuple_info") = py::none(),
        py::arg("codegen") = py::none());
}

}  // namespace fx_sdk
