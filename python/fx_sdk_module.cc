// fx_sdk._C: the C++ half of the Python package fx_sdk (python/fx_sdk.py
// is the other half and the public API). This file assembles the module: the
// GraphModule class, the in-memory bundle of modules and weights and the
// pipeline; the graph API, compiled plans and the bulk conversions from and
// to torch.fx are in their own files (bindings.h), the values that cross the
// boundary in python_values.cc.
//
// Graphs cross node by node in memory (torch_fx_reader.cc,
// torch_fx_builder.cc), module specs as fx-graph JSON text
// (docs/fx-graph-json.md), tensors as torch.Tensor objects (the same LibTorch
// as Python's torch: no copies). An error in the SDK's input (a graph, a
// config, a pipeline) raises ValueError; a failing pipeline raises
// RuntimeError.
#include <torch/extension.h>

#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fx_core/ir/python_repr.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/support/error.h"
#include "host/loader/plugin_discovery.h"
#include "host/pipeline/pass_manager.h"
#include "host/pipeline/pass_registry.h"
#include "host/pipeline/pass_target.h"
#include "host/pipeline/pipeline.h"
#include "host/pipeline/pipeline_report.h"
#include "python/bindings.h"
#include "python/python_values.h"
#include "python/released_gil.h"

namespace py = pybind11;

namespace fx_sdk {
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

py::object call(fx::GraphModule& gm, const py::args& args) {
  std::vector<c10::IValue> inputs = to_ivalues(args);
  c10::IValue out;
  {
    ReleasedGil released;
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
    ReleasedGil released;
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
