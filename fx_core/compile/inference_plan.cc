#include "fx_core/compile/inference_plan.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/TensorIterator.h>
#include <c10/core/GradMode.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fx_core/compile/buffer_pool.h"
#include "fx_core/compile/compiled_steps.h"
#include "fx_core/compile/direct_kernels.h"
#include "fx_core/compile/inference_program.h"
#include "fx_core/compile/onednn_steps.h"
#include "fx_core/compile/pointwise_kernel.h"
#include "fx_core/compile/shared_weights.h"
#include "fx_core/compile/tensor_meta.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/runtime/parallel.h"
#include "fx_core/runtime/runtime_codegen.h"
#include "fx_core/runtime/shape_guards.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {

// What a dynamic plan's shape specialisations share.
struct InferencePlan::Shared {
  SharedWeights weights;
  SharedBuffers buffers;
};

InferencePlan::InferencePlan(GraphModule& gm, PlanShapes shapes)
    : gm_(gm),
      compiled_(std::make_unique<CompiledSteps>(
          compile_steps(gm.graph(), gm, &gm.foreign_targets()))) {
  if (shapes == PlanShapes::kDynamic) shared_ = std::make_unique<Shared>();
}
InferencePlan::~InferencePlan() = default;

namespace {

bool simple_value(const c10::IValue& v) {
  return v.isNone() || v.isInt() || v.isDouble() || v.isBool() || v.isString();
}

}  // namespace

// Plans the compiled steps for `inputs` (already through process_inputs);
// the planning run's result goes to *out (unless the graph cannot be
// planned).
std::unique_ptr<InferencePlan::Program> InferencePlan::plan_for(
    std::vector<c10::IValue> inputs, c10::IValue* out) {
  c10::AutoGradMode no_grad(false);
  SharedWeightsScope weights(shared_ ? &shared_->weights : nullptr);
  auto program = std::make_unique<Program>();
  program->load(*compiled_);
  if (shared_) program->shared_buffers = &shared_->buffers;
  if (inputs.size() != program->num_inputs) program->plannable = false;
  for (const c10::IValue& v : inputs) {
    program->input_meta.push_back(TensorMeta::of(v));
    const bool tensor = program->input_meta.back().is_tensor;
    if (!tensor && !simple_value(v)) program->plannable = false;
    program->input_sig.push_back(tensor ? c10::IValue() : v);
  }
  if (!program->plannable) return program;
  const std::vector<c10::IValue> planning_inputs = inputs;
  *out = program->execute(std::move(inputs), /*record=*/true);
  // oneDNN convolutions write channels_last: record the layouts they give
  // before planning the rest around them.
  if (program->bind_onednn_steps(/*layout_setting=*/true)) {
    *out = program->execute(planning_inputs, /*record=*/true);
  }
  program->bind_onednn_steps(/*layout_setting=*/false);
  program->plan_direct();
  program->trial_kernels(planning_inputs);
  return program;
}

std::unique_ptr<InferencePlan> InferencePlan::build(
    GraphModule& gm, std::vector<c10::IValue> example_inputs,
    PlanShapes shapes) {
  std::unique_ptr<InferencePlan> plan(new InferencePlan(gm, shapes));
  c10::IValue out;
  std::vector<c10::IValue> in =
      process_inputs(gm.graph().codegen(), std::move(example_inputs));
  if (const sym::ShapeEnv* env = gm.shape_env()) {
    check_shape_guards(*env, gm.graph(), in);
  }
  plan->programs_.push_back(plan->plan_for(std::move(in), &out));
  plan->specialisations_ = 1;
  return plan;
}

// The program planned for inputs like `in`, moved to the front; nullptr
// when there is none (a static plan has one).
InferencePlan::Program* InferencePlan::find_program(
    const std::vector<c10::IValue>& in) {
  for (size_t i = 0; i < programs_.size(); ++i) {
    if (!programs_[i]->matches(in)) continue;
    std::rotate(programs_.begin(), programs_.begin() + i,
                programs_.begin() + i + 1);
    return programs_.front().get();
  }
  return nullptr;
}

// Plans for `in` (a new signature, or after the program for it left its
// plan): a dynamic plan adds a specialisation (evicting the least recently
// used past kMaxSpecialisations; inputs it cannot plan add none), a static
// plan replaces its program. Returns the planning run's result, or nullopt
// when these inputs cannot be planned.
std::optional<c10::IValue> InferencePlan::plan_new(std::vector<c10::IValue> in,
                                                   bool replan) {
  c10::IValue out;
  if (shared_ && !replan) {
    std::unique_ptr<Program> program = plan_for(std::move(in), &out);
    if (!program->plannable) return std::nullopt;  // not kept
    programs_.insert(programs_.begin(), std::move(program));
    if (programs_.size() > kMaxSpecialisations) {
      direct_fallbacks_ += programs_.back()->direct_fallbacks;
      programs_.pop_back();
    }
    ++specialisations_;
    return out;
  }
  direct_fallbacks_ += programs_.front()->direct_fallbacks;
  programs_.front() = plan_for(std::move(in), &out);
  ++replans_;
  if (!programs_.front()->plannable) return std::nullopt;
  return out;
}

c10::IValue InferencePlan::run(std::vector<c10::IValue> inputs) {
  if (c10::GradMode::is_enabled() || !programs_.front()->plannable) {
    ++forward_calls_;
    return gm_.forward(std::move(inputs));
  }
  // Products the plan leaves to ATen (inside leaf functions, unfused
  // matmuls) run on the calling thread instead of on OpenBLAS's own pool,
  // which would take turns with LibTorch's OpenMP pool (parallel.h).
  std::optional<OneBlasThread> one_blas_thread;
  if (at::get_num_threads() > 1 && blas_has_own_thread_pool()) {
    one_blas_thread.emplace();
  }
  const CodeGen& codegen = gm_.graph().codegen();
  std::vector<c10::IValue> in = process_inputs(codegen, inputs);
  if (const sym::ShapeEnv* env = gm_.shape_env()) {
    check_shape_guards(*env, gm_.graph(), in);  // a symbolic graph's guards
  }
  Program* program = find_program(in);
  if (program == nullptr || program->stale) {
    // Plan for these inputs: the planning run computes the result.
    std::optional<c10::IValue> out =
        plan_new(std::move(in), program != nullptr);
    if (!out) {
      ++forward_calls_;
      return gm_.forward(std::move(inputs));
    }
    return process_outputs(codegen, std::move(*out));
  }
  program->follow_shared_buffers();
  return process_outputs(codegen, program->execute(std::move(in), false));
}

InferencePlan::Stats InferencePlan::stats() const {
  Stats s;
  const Program& program = *programs_.front();
  for (const Program::Step& step : program.steps) {
    ++s.steps;
    const std::string_view engine = step.onednn ? step.onednn->engine() : "";
    if (engine == "onednn") ++s.onednn_steps;
    if (engine == "panel") ++s.panel_steps;
    if (step.onednn && step.onednn->winograd()) ++s.winograd_steps;
    if (step.fuses >= 0) ++s.depthwise_fusions;
    if (step.residual_in_place) ++s.residuals_in_place;
    if (step.pointwise) ++s.pointwise_steps;
    if (step.in_place) ++s.in_place_steps;
    if (step.cat_in_place) ++s.cats_in_place;
    if (step.direct || step.forwards >= 0) {  // forwards: a fused clamp
      ++s.direct_steps;
      if (step.fresh) ++s.fresh_outputs;
    } else if (step.is_call()) {
      ++s.fallback_steps;
    }
  }
  s.trial_steps = program.trial_steps;
  s.trial_groups = program.trial_groups;
  s.trial_overturned = program.trial_overturned;
  s.buffers = program.buffers.size();
  s.buffer_bytes = program.buffer_bytes;
  s.dynamic = shared_ != nullptr;
  s.plan_builds = 1 + replans_;
  s.shape_specialisations = specialisations_;
  s.live_specialisations = programs_.size();
  if (shared_) {
    s.shared_buffer_bytes = shared_->buffers.bytes();
    s.weight_packs = shared_->weights.packs();
  }
  s.replans = replans_;
  s.forward_calls = forward_calls_;
  s.direct_fallbacks = direct_fallbacks_;
  for (const auto& p : programs_) s.direct_fallbacks += p->direct_fallbacks;
  return s;
}

std::vector<std::string> InferencePlan::direct_nodes() const {
  std::vector<std::string> names;
  for (const Program::Step& step : programs_.front()->steps) {
    if (step.direct) names.emplace_back(step.node->name());
  }
  return names;
}

}  // namespace fx
