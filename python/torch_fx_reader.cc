// fx_sdk._C._from_torch_fx: a torch.fx Graph read straight into the SDK's
// Graph (fx_sdk.from_torch_fx's fast path; bindings.h), without the
// interchange format's JSON text in between.
//
// Each torch.fx Node becomes the fx::Node the fx-graph reader
// (fx_core/format/graph_json.cc) would make of what tools/torchfx_export.py
// writes for it: the same name, op, target (a call_function's as its
// qualified name), args and kwargs (torch.fx's values as argument.h holds
// them), type, and meta: the entries the format can hold, is_wrapped as the
// reader infers it. The modules section, still in the format's JSON, goes
// through that reader so that module specs are read in one place.
//
// Python callables the caller passes give what needs Python:
// target_name(function) -> qualified name, type_name(type) -> the type as
// code spells it, node_meta(node) -> the node's representable meta (raw
// values; tensor_meta as a dict of shape, dtype, stride, requires_grad,
// memory_format). target_name and type_name are called once per distinct
// object. A value the SDK cannot hold raises ValueError naming the node.
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
#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "python/bindings.h"

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

 private:
  py::object name_of_;
  py::list keep_;
  std::unordered_map<PyObject*, std::string> names_;
};

class TorchFxReader {
 public:
  TorchFxReader(py::object target_name, py::object type_name,
                py::object node_meta)
      : targets_(std::move(target_name)),
        types_(std::move(type_name)),
        node_meta_(std::move(node_meta)) {
    py::module_ torch = py::module_::import("torch");
    node_class_ = py::module_::import("torch.fx").attr("Node");
    dtype_ = torch.attr("dtype");
    device_ = torch.attr("device");
    memory_format_ = torch.attr("memory_format");
    layout_ = torch.attr("layout");
  }

  // Reads every node of `graph` (a torch.fx.Graph) into `out`.
  // `annotations` are the placeholders' annotations as gm.code spells them
  // (parameter -> annotation), `return_annotation` the output's.
  void read(py::handle graph, const py::dict& annotations,
            const std::string& return_annotation, fx::Graph& out) {
    for (py::handle node : graph.attr("nodes")) {
      read_node(node, annotations, return_annotation, out);
    }
  }

 private:
  void read_node(py::handle node, const py::dict& annotations,
                 const std::string& return_annotation, fx::Graph& out) {
    std::string name = node.attr("name").cast<std::string>();
    std::string op_name = node.attr("op").cast<std::string>();
    std::string where = "node '" + name + "'";
    std::optional<fx::Opcode> op = fx::parse_opcode(op_name);
    if (!op) throw py::value_error(where + ": unknown op '" + op_name + "'");
    py::object target_object = node.attr("target");
    std::string target = *op == fx::Opcode::kCallFunction
                             ? targets_.get(target_object)
                             : target_object.cast<std::string>();
    fx::Node::Args args;
    for (py::handle a : node.attr("_args")) {
      args.push_back(from_python(a, where + " args"));
    }
    fx::Node::Kwargs kwargs;
    for (auto [key, value] : py::dict(node.attr("_kwargs"))) {
      kwargs.emplace_back(key.cast<std::string>(),
                          from_python(value, where + " kwargs"));
    }
    std::string type =
        node_type(node, *op, target, annotations, return_annotation);
    fx::Node* made = out.create_node(*op, target, std::move(args),
                                     std::move(kwargs), name, type);
    if (made->name() != name) {
      throw py::value_error(where +
                            ": not a legal node name (the SDK would "
                            "name it '" +
                            std::string(made->name()) + "')");
    }
    fx::ArgumentDict meta = read_meta(node, where);
    if (*op == fx::Opcode::kCallFunction && fx::is_wrapped_by_default(target)) {
      py::object wrapped = node.attr("meta").attr("get")("is_wrapped", false);
      meta.emplace_back("is_wrapped",
                        fx::Argument(py::bool_(wrapped).cast<bool>()));
    }
    if (!meta.empty()) made->mutable_meta() = std::move(meta);
    nodes_.emplace(node.ptr(), made);
  }

  // As tools/torchfx_export.py's graph_document: a placeholder's and the
  // output's annotation as the code spells it, others from node.type.
  std::string node_type(py::handle node, fx::Opcode op,
                        const std::string& target, const py::dict& annotations,
                        const std::string& return_annotation) {
    if (op == fx::Opcode::kPlaceholder) {
      py::str key(target);
      return annotations.contains(key) ? annotations[key].cast<std::string>()
                                       : std::string();
    }
    if (op == fx::Opcode::kOutput) return return_annotation;
    py::object type = node.attr("type");
    return type.is_none() ? std::string() : types_.get(type);
  }

  fx::ArgumentDict read_meta(py::handle node, const std::string& where) {
    fx::ArgumentDict meta;
    if (py::len(node.attr("meta")) == 0) return meta;
    for (auto [key, value] : py::dict(node_meta_(node))) {
      std::string k = key.cast<std::string>();
      meta.emplace_back(k, from_python(value, where + " meta '" + k + "'"));
    }
    return meta;
  }

  fx::Argument from_python(py::handle value, const std::string& where) {
    if (value.is_none()) return fx::Argument();
    if (PyBool_Check(value.ptr())) return value.ptr() == Py_True;
    if (PyLong_Check(value.ptr())) {
      int overflow = 0;
      int64_t i = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
      if (overflow != 0) {
        throw py::value_error(where + ": the int does not fit in 64 bits");
      }
      return i;
    }
    if (PyFloat_Check(value.ptr())) return PyFloat_AsDouble(value.ptr());
    if (PyUnicode_Check(value.ptr())) return value.cast<std::string>();
    if (py::isinstance(value, node_class_)) {
      auto it = nodes_.find(value.ptr());
      if (it == nodes_.end()) {
        throw py::value_error(where + ": node '" +
                              py::str(value.attr("name")).cast<std::string>() +
                              "' is not defined before");
      }
      return it->second;
    }
    if (PyTuple_Check(value.ptr()) || PyList_Check(value.ptr())) {
      fx::ArgumentList items;
      items.reserve(py::len(value));
      for (py::handle item : value) items.push_back(from_python(item, where));
      // torch.Size is a tuple; a NamedTuple too (as the format writes it).
      return PyList_Check(value.ptr()) ? fx::Argument::list(std::move(items))
                                       : fx::Argument::tuple(std::move(items));
    }
    if (PyDict_Check(value.ptr())) return dict_from_python(value, where);
    if (PySlice_Check(value.ptr())) {
      return fx::Argument::slice(from_python(value.attr("start"), where),
                                 from_python(value.attr("stop"), where),
                                 from_python(value.attr("step"), where));
    }
    if (value.ptr() == Py_Ellipsis) return fx::Argument::ellipsis();
    return torch_value(value, where);
  }

  fx::Argument dict_from_python(py::handle value, const std::string& where) {
    fx::ArgumentDict items;
    for (auto [key, item] : py::reinterpret_borrow<py::dict>(value)) {
      if (!PyUnicode_Check(key.ptr())) {
        throw py::value_error(where + ": dict with non-string keys");
      }
      items.emplace_back(key.cast<std::string>(), from_python(item, where));
    }
    return fx::Argument::dict(std::move(items));
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
    throw py::value_error(
        where + ": cannot encode a " +
        py::str(value.get_type().attr("__name__")).cast<std::string>());
  }

  NameCache targets_;
  NameCache types_;
  py::object node_meta_;
  py::object node_class_, dtype_, device_, memory_format_, layout_;
  std::unordered_map<PyObject*, fx::Node*> nodes_;
};

// The modules section of the format, read by the format's own reader (as
// a document whose graph is only an output node).
std::vector<std::pair<std::string, fx::ModuleSpec>> read_modules(
    const std::string& modules_json) {
  std::string document =
      "{\"format\": \"fx-graph\", \"version\": 1, \"nodes\": [{\"name\": "
      "\"output\", \"op\": \"output\", \"target\": \"output\", \"args\": "
      "[null], \"kwargs\": {}}], \"modules\": " +
      modules_json + "}";
  absl::StatusOr<fx::GraphFile> file =
      fx::parse_graph_json(document, "<memory>");
  if (!file.ok()) raise_value_error(file.status());
  return std::move(file->modules);
}

std::shared_ptr<fx::GraphModule> from_torch_fx(
    py::handle graph, const py::dict& annotations,
    const std::string& return_annotation, const std::string& modules_json,
    const fx::TensorList& weights, py::object target_name, py::object type_name,
    py::object node_meta) {
  fx::GraphFile file;
  file.modules = read_modules(modules_json);
  file.graph = std::make_unique<fx::Graph>();
  TorchFxReader reader(std::move(target_name), std::move(type_name),
                       std::move(node_meta));
  reader.read(graph, annotations, return_annotation, *file.graph);
  if (file.graph->output_node() == nullptr) {
    throw py::value_error("the graph has no output node");
  }
  if (!weights.empty()) file.weights = "in-memory";
  absl::StatusOr<std::shared_ptr<fx::GraphModule>> gm;
  {
    py::gil_scoped_release released;
    gm = fx::load_graph_module_shared(std::move(file), weights);
  }
  if (!gm.ok()) raise_value_error(gm.status());
  return *std::move(gm);
}

}  // namespace

void bind_torch_fx_reader(py::module_& m) {
  m.def("_from_torch_fx", &from_torch_fx, py::arg("graph"),
        py::arg("annotations"), py::arg("return_annotation"),
        py::arg("modules_json"), py::arg("weights"), py::arg("target_name"),
        py::arg("type_name"), py::arg("node_meta"));
}

}  // namespace fx_sdk
