// fx_sdk._C.CompiledGraph: an SDK GraphModule planned for inference
// (fx::InferencePlan, fx_core/compile) on example inputs, called as a
// function: fx_sdk.compile returns one, and functorch.compile.aot_function
// takes fx_sdk.compile as its fw_compiler.
//
// The plan points into the GraphModule, so a CompiledGraph holds it; one
// runs at a time (the plan reuses its buffers), the GIL released meanwhile.
// A static plan (the default) re-plans on inputs of other shapes; a dynamic
// one (dynamic=True) runs every shape with one plan, specialising its
// kernels lazily per shape; `plan_builds` counts the plans built. With grad
// mode on both run GraphModule::forward (inference_plan.h).
#include <torch/csrc/jit/python/pybind_utils.h>
#include <torch/extension.h>

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "fx_core/compile/inference_plan.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/support/error.h"
#include "python/bindings.h"
#include "python/python_values.h"
#include "python/released_gil.h"

namespace py = pybind11;

namespace fx_sdk {
namespace {

class CompiledGraph {
 public:
  // Plans `gm` for inputs like `example_inputs`; ValueError naming the node
  // when the graph cannot run on them.
  CompiledGraph(std::shared_ptr<fx::GraphModule> gm,
                std::vector<c10::IValue> example_inputs, bool dynamic)
      : gm_(std::move(gm)) {
    try {
      ReleasedGil released;
      plan_ = fx::InferencePlan::build(
          *gm_, std::move(example_inputs),
          dynamic ? fx::PlanShapes::kDynamic : fx::PlanShapes::kStatic);
    } catch (const fx::FxError& e) {
      throw py::value_error(e.what());
    }
  }

  py::object call(const py::args& args) {
    std::vector<c10::IValue> inputs = to_ivalues(args);
    c10::IValue out;
    {
      ReleasedGil released;
      std::lock_guard<std::mutex> lock(mutex_);
      out = plan_->run(std::move(inputs));
    }
    return to_python(std::move(out));
  }

  const std::shared_ptr<fx::GraphModule>& graph_module() const { return gm_; }

  py::dict stats() const {
    fx::InferencePlan::Stats s = plan_->stats();
    py::dict d;
    d["steps"] = s.steps;
    d["direct_steps"] = s.direct_steps;
    d["fallback_steps"] = s.fallback_steps;
    d["buffers"] = s.buffers;
    d["buffer_bytes"] = s.buffer_bytes;
    d["replans"] = s.replans;
    d["forward_calls"] = s.forward_calls;
    d["dynamic"] = s.dynamic;
    d["plan_builds"] = s.plan_builds;
    d["shape_specialisations"] = s.shape_specialisations;
    d["live_specialisations"] = s.live_specialisations;
    d["shared_buffer_bytes"] = s.shared_buffer_bytes;
    d["weight_packs"] = s.weight_packs;
    d["onednn_steps"] = s.onednn_steps;
    d["direct_fallbacks"] = s.direct_fallbacks;
    d["cats_in_place"] = s.cats_in_place;
    d["winograd_steps"] = s.winograd_steps;
    d["panel_steps"] = s.panel_steps;
    d["depthwise_fusions"] = s.depthwise_fusions;
    d["trial_steps"] = s.trial_steps;
    d["trial_groups"] = s.trial_groups;
    d["trial_overturned"] = s.trial_overturned;
    return d;
  }

  size_t plan_builds() const { return plan_->stats().plan_builds; }

 private:
  std::shared_ptr<fx::GraphModule> gm_;
  std::unique_ptr<fx::InferencePlan> plan_;
  std::mutex mutex_;
};

}  // namespace

void bind_compiled_graph(py::module_& m) {
  // dynamic_attr: fx_sdk.compile records the pipeline it ran on the
  // object (pipeline, passes, pipeline_report).
  py::class_<CompiledGraph>(
      m, "CompiledGraph", py::dynamic_attr(),
      "An SDK GraphModule planned for inference (fx::InferencePlan): call it "
      "as the GraphModule.")
      .def("__call__", &CompiledGraph::call,
           "Runs the plan on the inputs (positional, as gm.forward's).")
      .def_property_readonly("graph_module", &CompiledGraph::graph_module,
                             "The SDK GraphModule the plan runs.")
      .def_property_readonly(
          "stats", &CompiledGraph::stats,
          "What the plan does: steps, direct_steps (bound to ATen CPU "
          "kernels), onednn_steps (winograd_steps of them on Winograd; "
          "panel_steps: linears on the plan's own AVX-512 product; "
          "depthwise_fusions: 1x1 convolutions computing the depthwise one "
          "after them too; trial_steps: convolutions and linears whose two "
          "kernels were tried inside the network, decided in trial_groups "
          "groups of one op and shapes, trial_overturned of them moved off "
          "the kernel timed fastest alone), fallback_steps, buffers, "
          "buffer_bytes, "
          "replans, forward_calls, direct_fallbacks; dynamic, plan_builds, "
          "shape_specialisations (shapes specialised lazily so far), "
          "live_specialisations, shared_buffer_bytes, weight_packs (dynamic "
          "plans).")
      .def_property_readonly(
          "plan_builds", &CompiledGraph::plan_builds,
          "How many plans it has built: 1 for a dynamic plan however many "
          "shapes it ran; a static one adds one per re-plan.");
  m.def(
      "_compile",
      [](std::shared_ptr<fx::GraphModule> gm, const py::list& example_inputs,
         bool dynamic) {
        return std::make_unique<CompiledGraph>(
            std::move(gm), to_ivalues(example_inputs), dynamic);
      },
      py::arg("gm"), py::arg("example_inputs"), py::arg("dynamic") = false);
}

}  // namespace fx_sdk
