// fx_sdk._C: the C++ half of the Python package fx_sdk (python/fx_sdk.py
// is the other half and the public API). This file assembles the module: the
// GraphModule class, the in-memory bundle of modules and weights and the
// pipeline; the graph API, compiled plans and the bulk conversions from and
// to torch.fx are in their own files (bindings.h).
//
// Graphs cross node by node in memory (torch_fx_reader.cc,
// torch_fx_builder.cc), module specs as fx-graph JSON text
// (../shared/spec), tensors as torch.Tensor objects (the same LibTorch as
// Python's torch: no copies).
// An error in the SDK's input (a graph, a config, a pipeline) raises
// ValueError; a failing pipeline raises RuntimeError.
#include <torch/csrc/jit/python/pybind_utils.h>
#include <torch/extension.h>

#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fx_core/io/python_tuples.h"
#include "fx_core/ir/python_repr.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "plugin_api/loader/plugin_discovery.h"
#include "plugin_api/pipeline/pass_manager.h"
#include "plugin_api/pipeline/pass_registry.h"
#include "plugin_api/pipeline/pass_target.h"
#include "plugin_api/pipeline/pipeline.h"
#include "plugin_api/pipeline/pipeline_report.h"
#include "python/bindings.h"

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

// With include_nodes false the JSON has the modules and no nodes; with
// in_process the modules that are Python objects are left out
// (_python_objects gives them).
py::tuple to_bundle(const fx::GraphModule& gm, bool include_nodes,
                    bool in_process) {
  std::vector<std::string> kept;
  absl::StatusOr<fx::GraphBundle> bundle = fx::describe_graph_module(
      gm, "in-memory", include_nodes, in_process ? &kept : nullptr);
  if (!bundle.ok()) raise_value_error(bundle.status());
  return py::make_tuple(bundle->json, bundle->weights);
}

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

}  // namespace

namespace {

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

namespace {

py::object call(fx::GraphModule& gm, const py::args& args) {
  std::vector<c10::IValue> inputs = to_ivalues(args);
  c10::IValue out;
  {
    py::gil_scoped_release released;
    out = gm.forward(std::move(inputs));
  }
  return to_python(std::move(out));
}

const char* outcome_name(fx::host::PassRecord::Outcome outcome) {
  switch (outcome) {
    case fx::host::PassRecord::Outcome::kRan:
      return "ran";
    case fx::host::PassRecord::Outcome::kRolledBack:
      return "rolled_back";
    case fx::host::PassRecord::Outcome::kNotRun:
      return "not_run";
  }
  return "not_run";
}

// Runs `pipeline` on `gm` in place; returns the report as a list of dicts.
// With `recompile` false gm's code and compiled plan are left as they were
// (GraphModuleTarget's recompile_at_finish): for a caller that converts the
// graph and drops gm.
// `pipeline` may be a named pipeline (O1, O2, inference); `on_failure`
// ("stop" or "skip", empty: the pipeline's default, stop) says whether a
// failed pass stops the run or is rolled back and skipped.
// Raises ValueError for a pipeline that does not parse, plugins that do not
// load or passes that do not resolve, RuntimeError when the pipeline stops.
py::list run_pipeline(fx::GraphModule& gm, const std::string& pipeline,
                      const std::vector<std::string>& plugins,
                      const std::vector<std::string>& plugin_dirs,
                      bool default_dirs,
                      const std::vector<at::Tensor>& example_inputs,
                      bool recompile,
                      std::vector<std::vector<at::Tensor>> example_batches,
                      const std::string& on_failure) {
  absl::StatusOr<fx::host::PipelineSpec> spec =
      fx::host::parse_pipeline_text(pipeline);
  if (!spec.ok()) raise_value_error(spec.status());
  if (!on_failure.empty()) {
    absl::StatusOr<fx::host::FailurePolicy> policy =
        fx::host::parse_failure_policy(on_failure);
    if (!policy.ok()) {
      raise_value_error(absl::InvalidArgumentError(
          "on_failure: " + std::string(policy.status().message())));
    }
    spec->on_failure = *policy;
  }
  fx::host::PluginSources sources;
  sources.plugins = plugins;
  sources.plugin_dirs = plugin_dirs;
  sources.default_dirs = default_dirs;
  fx::host::PassRegistry registry;
  absl::Status loaded = fx::host::load_plugins(*spec, sources, registry);
  if (!loaded.ok()) raise_value_error(loaded);
  absl::StatusOr<fx::host::PassManager> pm =
      fx::host::PassManager::create(registry, *std::move(spec));
  if (!pm.ok()) raise_value_error(pm.status());
  fx::host::PipelineReport report;
  std::ostringstream printed;
  {
    py::gil_scoped_release released;
    fx::host::GraphModuleTarget target(gm, example_inputs, recompile);
    target.add_example_batches(std::move(example_batches));
    fx::host::RunHooks hooks;
    hooks.print_after = &printed;
    report = pm->run(target, hooks);
  }
  // A rollback puts a snapshot in the graph's place.
  bool replaced = report.stopped;
  for (const fx::host::PassRecord& r : report.passes) {
    replaced |= r.outcome == fx::host::PassRecord::Outcome::kRolledBack;
  }
  if (replaced) graph_replaced(gm);
  if (report.stopped) throw std::runtime_error(report.failure);
  py::list records;
  for (const fx::host::PassRecord& r : report.passes) {
    py::dict record;
    record["pass"] = r.pass;
    record["plugin"] = r.plugin;
    record["outcome"] = outcome_name(r.outcome);
    record["changed"] = r.changed;
    record["seconds"] = r.run_seconds;
    record["verify_seconds"] = r.verify_seconds;
    record["error"] = r.error;
    records.append(std::move(record));
  }
  return records;
}

}  // namespace
}  // namespace fx_sdk

PYBIND11_MODULE(_C, m) {
  using namespace fx_sdk;  // NOLINT: the bindings below
  m.doc() = "The C++ half of fx_sdk; use the fx_sdk module.";
  GraphModuleClass graph_module(
      m, "GraphModule",
      "The SDK's GraphModule (fx::GraphModule), made by "
      "fx_sdk.from_torch_fx.");
  graph_module
      .def_property_readonly(
          "code", [](const fx::GraphModule& gm) { return gm.code(); },
          "The generated Python code, as torch.fx's gm.code.")
      .def_property_readonly(
          "graph_text",
          [](const fx::GraphModule& gm) { return gm.graph().str(); },
          "The graph as print(gm.graph) prints it (num_users form).")
      .def("__call__", &call, "Runs the compiled plan on the inputs.")
      .def("__repr__", [](const fx::GraphModule& gm) {
        return "<fx_sdk.GraphModule " + gm.class_name() + ">";
      });
  bind_graph(m, graph_module);
  bind_compiled_graph(m);
  bind_torch_fx_builder(m);
  bind_torch_fx_reader(m);
  bind_forward_bytecode(m);
  bind_shape_env(m, graph_module);
  bind_symbolic_shape_prop(m);
  bind_python_callables(m);
  m.def(
      "_python_codegen",
      [](const fx::GraphModule& gm) {
        return python_codegen_object(gm.graph().codegen());
      },
      py::arg("gm"),
      "The user's torch.fx CodeGen the SDK graph holds, or None.");
  m.def("_type_text_form", &fx::type_text_form, py::arg("code_form"),
        "How the graph prints an annotation the code spells `code_form`, "
        "when nothing else says (a NODE's type_text).");
  m.def("_to_bundle", &to_bundle, py::arg("gm"),
        py::arg("include_nodes") = true, py::arg("in_process") = false);
  m.def("_run_pipeline", &run_pipeline, py::arg("gm"), py::arg("pipeline"),
        py::arg("plugins"), py::arg("plugin_dirs"), py::arg("default_dirs"),
        py::arg("example_inputs"), py::arg("recompile") = true,
        py::arg("example_batches") = std::vector<std::vector<at::Tensor>>{},
        py::arg("on_failure") = std::string());
  m.def(
      "_deepcopy",
      [](const fx::GraphModule& gm) {
        try {
          return gm.deepcopy();
        } catch (const fx::FxError& e) {
          throw py::value_error(e.what());
        }
      },
      py::arg("gm"),
      "An independent copy of gm (GraphModule::deepcopy): graph, weights, "
      "submodules.");
}
