#include "fx_core/compile/inference_plan.h"

#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>
#include <c10/core/GradMode.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/compile/buffer_pool.h"
#include "fx_core/compile/compiled_steps.h"
#include "fx_core/compile/direct_kernels.h"
#include "fx_core/compile/onednn_steps.h"
#include "fx_core/compile/pointwise_kernel.h"
#include "fx_core/compile/shared_weights.h"
#include "fx_core/compile/tensor_meta.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/runtime/runtime_codegen.h"
#include "fx_core/runtime/shape_guards.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

using Source = ValueSource;

// Where a direct step's operand i comes from (fx_inference.pointwise: the
// items of its `inputs` list).
const ValueSource& operand_source(const CompiledStep& step, size_t i,
                                  bool pointwise) {
  return pointwise ? step.params[0].items[i] : step.params[i];
}

}  // namespace

struct InferencePlan::Program {
  struct Operand {
    int iter_index = 0;  // operand index in the TensorIterator
    int32_t slot = -1;
    TensorMeta meta;
  };
  // A compiled step and what binding it to an ATen kernel adds.
  struct Step : CompiledStep {
    explicit Step(CompiledStep&& compiled)
        : CompiledStep(std::move(compiled)) {}
    bool direct = false;
    DirectOp direct_op = DirectOp::kAdd;
    c10::Scalar s1, s2;  // alpha; clamp bounds
    std::optional<at::TensorIterator> iter;
    std::vector<Operand> variable;  // operands re-pointed each run
    at::Tensor buffer;              // the planned result (unless fresh)
    bool fresh = false;             // allocate the result each run
    TensorMeta out_meta;
    size_t num_operands = 0;
    std::vector<at::Tensor> operands;  // as the iterator was built on
    // fx_inference.pointwise in one pass: the kernel (operands: the
    // `inputs` list's items).
    std::shared_ptr<PointwiseKernel> pointwise;
    bool in_place = false;  // the result overwrites a dead operand's buffer
    // fx_inference.conv2d / linear / matmul on oneDNN, and its operands
    // (re-filled each run: no allocation).
    std::shared_ptr<OnednnStep> onednn;
    std::vector<const at::Tensor*> onednn_operands;
    bool residual_in_place = false;  // sums into the dead residual's buffer
  };
  // Per alias group (indexed by its root slot): the last step reading any
  // of its values, and whether one of them reaches the output.
  struct GroupLiveness {
    std::vector<size_t> last;
    std::vector<bool> escapes;
  };

  std::vector<Step> steps;  // compile_steps' steps, in graph order
  size_t num_slots = 0;
  size_t num_inputs = 0;
  std::vector<size_t> last_use;        // per slot (CompiledSteps::last_use)
  std::vector<c10::IValue> input_sig;  // tensors: unused; else the value
  std::vector<TensorMeta> input_meta;
  bool plannable = true;  // false: inputs we cannot compare (lists...)
  std::vector<TensorMeta> slot_meta;
  std::vector<at::Tensor> buffers;
  size_t buffer_bytes = 0;
  std::vector<at::Tensor> scratch;  // stand-in memory for variable operands
  // Dynamic plans: the memory every specialisation's buffers live in, and
  // its generation when the iterators last pointed into it.
  SharedBuffers* shared_buffers = nullptr;
  uint64_t buffers_generation = 0;
  size_t direct_fallbacks = 0;
  bool diverged = false;  // this run left the plan (see run_direct)
  bool stale = false;     // re-plan before the next run

  std::vector<c10::IValue> slots;
  std::vector<c10::IValue> buffer_args;

  void load(CompiledSteps compiled);
  void follow_shared_buffers();
  c10::IValue execute(std::vector<c10::IValue> inputs, bool record);
  c10::IValue run_kernel(const Step& step);
  void run_direct(Step& step);
  bool matches(const std::vector<c10::IValue>& inputs) const;

  void plan_direct();
  bool bind_onednn_steps(bool layout_setting);
  PlannedParam planned_param(const Source& s) const;
  void run_onednn(Step& step);
  std::vector<bool> find_candidates(AliasGroups& groups);
  GroupLiveness group_liveness(AliasGroups& groups) const;
  void place_direct(Step& step, size_t index, AliasGroups& groups,
                    const GroupLiveness& live, BufferPool& pool);
  bool take_dead_operand(Step& step, size_t index, AliasGroups& groups,
                         const GroupLiveness& live, BufferPool& pool,
                         at::Tensor* out);
  bool only_reader_of_group(const Step& step, int32_t slot,
                            AliasGroups& groups) const;
  bool bind_pointwise(Step& step);
  void place_onednn(Step& step, AliasGroups& groups, const GroupLiveness& live,
                    BufferPool& pool);
  void residuals_in_place(const std::vector<bool>& candidate,
                          AliasGroups& groups, GroupLiveness* live);
  bool bind_direct(Step& step);
  bool operands_fit(const Step& step, size_t num_operands) const;
  void make_operands(Step& step);
  at::Tensor stand_in(size_t i, int32_t slot, Step& step);
};

void InferencePlan::Program::load(CompiledSteps compiled) {
  steps.reserve(compiled.steps.size());
  for (CompiledStep& step : compiled.steps) {
    // `*args` and defaults: planned only when given explicitly.
    if (step.var_args || step.has_default) plannable = false;
    steps.emplace_back(std::move(step));
  }
  num_slots = compiled.num_slots;
  num_inputs = compiled.num_inputs;
  last_use = std::move(compiled.last_use);
  slots.assign(num_slots, c10::IValue());
  buffer_args.assign(compiled.max_params, c10::IValue());
}

// ------------------------------------------------------------------ running

// After SharedBuffers moved a block (another shape grew it): the iterators
// read their operands' and results' data pointers again (variable operands
// are re-pointed on each run anyway).
void InferencePlan::Program::follow_shared_buffers() {
  if (shared_buffers == nullptr ||
      shared_buffers->generation() == buffers_generation) {
    return;
  }
  for (Step& step : steps) {
    if (!step.iter) continue;
    at::TensorIterator& it = *step.iter;
    for (int i = 0; i < it.ntensors(); ++i) {
      it.unsafe_replace_operand(i, it.tensor_base(i).data_ptr());
    }
  }
  buffers_generation = shared_buffers->generation();
}

c10::IValue InferencePlan::Program::execute(std::vector<c10::IValue> inputs,
                                            bool record) {
  if (record) slot_meta.assign(num_slots, TensorMeta());
  diverged = false;
  if (inputs.size() != num_inputs) {
    throw FxError(cat("forward() takes ", num_inputs, " inputs but ",
                      inputs.size(), " were given"));
  }
  for (Step& step : steps) {
    try {
      switch (step.kind) {
        case Step::Kind::kPlaceholder:
          slots[step.slot] = std::move(inputs[step.input_index]);
          break;
        case Step::Kind::kConstant:
          slots[step.slot] = step.constant;
          break;
        case Step::Kind::kCallOp:
        case Step::Kind::kCallModule:
          if (step.onednn) {
            run_onednn(step);
          } else if (step.direct) {
            run_direct(step);
          } else {
            slots[step.slot] = run_kernel(step);
          }
          break;
        case Step::Kind::kOutput: {
          c10::IValue out = step.params[0].get(slots);
          for (c10::IValue& s : slots) s = c10::IValue();
          return out;
        }
      }
    } catch (const std::exception& e) {
      for (c10::IValue& s : slots) s = c10::IValue();
      throw node_error(*step.node, e);
    }
    if (record && step.slot >= 0) {
      slot_meta[step.slot] = TensorMeta::of(slots[step.slot]);
    }
    for (int32_t slot : step.release) slots[slot] = c10::IValue();
  }
  return c10::IValue();
}

// The registry's kernel; the step's last reads take their values over.
c10::IValue InferencePlan::Program::run_kernel(const Step& step) {
  return call_step(step, step.last_reads, slots, buffer_args);
}

void InferencePlan::Program::run_direct(Step& step) {
  at::TensorIterator& it = *step.iter;
  if (diverged) {
    slots[step.slot] = run_kernel(step);
    return;
  }
  for (const Operand& op : step.variable) {
    const c10::IValue& v = slots[op.slot];
    if (!v.isTensor() || !op.meta.matches(v.toTensor())) {
      // Not the planned layout: from here on this run takes the registries'
      // kernels (later direct steps may read this step's planned buffer),
      // and the next run re-plans.
      ++direct_fallbacks;
      diverged = true;
      stale = true;
      slots[step.slot] = run_kernel(step);
      return;
    }
    it.unsafe_replace_operand(op.iter_index, v.toTensor().data_ptr());
  }
  at::Tensor out = step.buffer;
  if (step.fresh) {
    out = at::empty_strided(step.out_meta.sizes, step.out_meta.strides,
                            at::TensorOptions()
                                .dtype(step.out_meta.dtype)
                                .device(step.out_meta.device));
    it.unsafe_replace_operand(0, out.data_ptr());
  }
  if (step.pointwise) {
    step.pointwise->run(it);
  } else {
    run_stub(step.direct_op, it, step.s1, step.s2);
  }
  slots[step.slot] = std::move(out);
}

bool InferencePlan::Program::matches(
    const std::vector<c10::IValue>& inputs) const {
  if (inputs.size() != num_inputs) return false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const c10::IValue& v = inputs[i];
    if (input_meta[i].is_tensor) {
      if (!v.isTensor() || !input_meta[i].matches(v.toTensor())) return false;
      continue;
    }
    const c10::IValue& want = input_sig[i];
    if (v.tagKind() != want.tagKind()) return false;
    if (v.isNone()) continue;
    if (v.isInt() && v.toInt() == want.toInt()) continue;
    if (v.isDouble() && (v.toDouble() == want.toDouble())) continue;
    if (v.isBool() && v.toBool() == want.toBool()) continue;
    if (v.isString() && v.toStringRef() == want.toStringRef()) continue;
    return false;
  }
  return true;
}

// ----------------------------------------------------------------- planning

// Binds direct candidates in graph order (operands may come from earlier
// candidates' buffers), giving them buffers planned from liveness.
void InferencePlan::Program::plan_direct() {
  AliasGroups groups(num_slots);
  std::vector<bool> candidate = find_candidates(groups);
  GroupLiveness live = group_liveness(groups);
  residuals_in_place(candidate, groups, &live);
  // The groups whose last use is each step; escaping groups keep theirs.
  std::vector<std::vector<int32_t>> groups_ending(steps.size());
  for (size_t s = 0; s < num_slots; ++s) {
    if (groups.is_root(s) && !live.escapes[s]) {
      groups_ending[live.last[s]].push_back(static_cast<int32_t>(s));
    }
  }
  BufferPool pool(num_slots, shared_buffers);
  for (size_t i = 0; i < steps.size(); ++i) {
    if (candidate[i] && steps[i].onednn) {
      place_onednn(steps[i], groups, live, pool);
    } else if (candidate[i]) {
      place_direct(steps[i], i, groups, live, pool);
    }
    for (int32_t r : groups_ending[i]) pool.release_group(r);
  }
  buffers = pool.tensors();
  if (shared_buffers) buffers_generation = shared_buffers->generation();
}

// The steps a direct kernel may run. Any other call's result may alias its
// tensor arguments (views, in-place modules): one group.
std::vector<bool> InferencePlan::Program::find_candidates(AliasGroups& groups) {
  std::vector<bool> candidate(steps.size(), false);
  for (size_t i = 0; i < steps.size(); ++i) {
    Step& step = steps[i];
    candidate[i] = step.onednn || bind_direct(step);
    if (!candidate[i] && step.is_call()) {
      for (const Source& s : step.params) {
        s.for_each_slot([&](int32_t slot) { groups.unite(step.slot, slot); });
      }
    }
  }
  return candidate;
}

InferencePlan::Program::GroupLiveness InferencePlan::Program::group_liveness(
    AliasGroups& groups) const {
  std::vector<bool> escapes(num_slots, false);
  for (const Step& step : steps) {
    if (step.kind != Step::Kind::kOutput) continue;
    for (const Source& s : step.params) {
      s.for_each_slot([&](int32_t slot) { escapes[slot] = true; });
    }
  }
  GroupLiveness live{std::vector<size_t>(num_slots, 0),
                     std::vector<bool>(num_slots, false)};
  for (size_t s = 0; s < num_slots; ++s) {
    int32_t r = groups.find(static_cast<int32_t>(s));
    live.last[r] = std::max(live.last[r], last_use[s]);
    if (escapes[s]) live.escapes[r] = true;
  }
  return live;
}

// The step's result buffer (fresh each run when its group escapes; a dead
// operand's, else one from the pool) and its TensorIterator; on failure the
// step is left to the registry (its group keeps the buffer taken until the
// group's end).
void InferencePlan::Program::place_direct(Step& step, size_t index,
                                          AliasGroups& groups,
                                          const GroupLiveness& live,
                                          BufferPool& pool) {
  const int32_t r = groups.find(step.slot);
  step.fresh = live.escapes[r];
  at::Tensor out;
  if (step.fresh) {
    out = at::empty_strided(step.out_meta.sizes, step.out_meta.strides,
                            at::TensorOptions().dtype(step.out_meta.dtype));
  } else {
    step.in_place = take_dead_operand(step, index, groups, live, pool, &out);
    if (!step.in_place) out = pool.take(step.out_meta, r, &buffer_bytes);
    step.buffer = out;
  }
  make_operands(step);
  bool ok = true;
  try {
    at::TensorIterator it =
        step.pointwise ? step.pointwise->make_iterator(out, step.operands)
                       : make_iterator(step.direct_op, out, step.operands);
    ok = iterates_in_place(it, out, step.operands);
    if (ok) step.iter.emplace(std::move(it));
  } catch (const c10::Error&) {
    ok = false;
  }
  if (!ok) {
    step.variable.clear();
    step.operands.clear();
    step.buffer = at::Tensor();
    step.pointwise.reset();
    step.in_place = false;
    return;
  }
  step.direct = true;
  if (step.fresh) step.buffer = at::Tensor();
}

// In place: an operand held in a planned buffer (a direct or oneDNN step's,
// not fresh) whose alias group is dead after step `index` and whose layout
// is the result's gives the result its buffer (handed over to the result's
// group). Elementwise kernels read each element before writing it at the
// same offset, so out may be that operand.
bool InferencePlan::Program::take_dead_operand(Step& step, size_t index,
                                               AliasGroups& groups,
                                               const GroupLiveness& live,
                                               BufferPool& pool,
                                               at::Tensor* out) {
  const bool pointwise = step.direct_op == DirectOp::kPointwise;
  for (size_t i = 0; i < step.num_operands; ++i) {
    const Source& s = operand_source(step, i, pointwise);
    if (s.kind != Source::Kind::kSlot) continue;
    const Step& producer = steps[s.slot];
    const int32_t g = groups.find(s.slot);
    if (!producer.direct || producer.fresh || !producer.buffer.defined() ||
        live.escapes[g] || live.last[g] != index ||
        !producer.out_meta.same_layout(step.out_meta) ||
        producer.out_meta.device != step.out_meta.device) {
      continue;
    }
    if (!only_reader_of_group(step, s.slot, groups) ||
        !pool.transfer(producer.buffer, g, groups.find(step.slot))) {
      continue;
    }
    *out = producer.buffer;
    return true;
  }
  return false;
}

// Whether no operand of `step` but `slot` itself may alias `slot` (a view of
// it read at other offsets would see the result being written).
bool InferencePlan::Program::only_reader_of_group(const Step& step,
                                                  int32_t slot,
                                                  AliasGroups& groups) const {
  const bool pointwise = step.direct_op == DirectOp::kPointwise;
  const int32_t g = groups.find(slot);
  for (size_t i = 0; i < step.num_operands; ++i) {
    const Source& s = operand_source(step, i, pointwise);
    if (s.kind == Source::Kind::kSlot && s.slot != slot &&
        groups.find(s.slot) == g) {
      return false;
    }
  }
  return true;
}

// ------------------------------------------------------------ oneDNN steps

// A oneDNN step's result buffer: its residual's when it sums in place, none
// when its group escapes (a fresh tensor each run), else one from the pool.
void InferencePlan::Program::place_onednn(Step& step, AliasGroups& groups,
                                          const GroupLiveness& live,
                                          BufferPool& pool) {
  const int32_t r = groups.find(step.slot);
  step.out_meta = slot_meta[step.slot];
  step.fresh = live.escapes[r];
  step.direct = true;
  if (step.fresh) return;
  if (step.residual_in_place) {
    const Step& producer = steps[step.onednn->residual()];
    if (producer.direct && !producer.fresh && producer.buffer.defined() &&
        producer.out_meta.same_layout(step.out_meta)) {
      step.buffer = producer.buffer;
      return;
    }
    step.residual_in_place = false;
  }
  step.buffer = pool.take(step.out_meta, r, &buffer_bytes);
}

// oneDNN steps summing in place (convolutions) whose residual is dead after
// them write into its buffer (the sum post-op accumulates there; no copy):
// the residual comes from a direct step, has the result's layout, is not the
// step's input and neither group escapes. Their groups are united so the buffer
// lives on with the result (*live is updated: a chain of residual blocks shares
// one buffer).
void InferencePlan::Program::residuals_in_place(
    const std::vector<bool>& candidate, AliasGroups& groups,
    GroupLiveness* live_groups) {
  const GroupLiveness& live = *live_groups;
  for (size_t i = 0; i < steps.size(); ++i) {
    Step& step = steps[i];
    if (!step.onednn || !step.onednn->sums_in_place()) continue;
    const int32_t residual = step.onednn->residual();
    if (residual < 0) continue;
    const int32_t res = groups.find(residual);
    const int32_t self = groups.find(step.slot);
    if (!candidate[residual] || live.last[res] != i || live.escapes[res] ||
        live.escapes[self] || res == self ||
        res == groups.find(step.onednn->inputs()[0]) ||
        !slot_meta[residual].same_layout(slot_meta[step.slot])) {
      continue;
    }
    groups.unite(step.slot, residual);
    step.residual_in_place = true;
    *live_groups = group_liveness(groups);
  }
}

// Binds the calls oneDNN can run as planned (onednn_steps.h): those
// whose result layout is oneDNN's own (convolutions) or the others; returns
// whether any was.
bool InferencePlan::Program::bind_onednn_steps(bool layout_setting) {
  bool any = false;
  for (Step& step : steps) {
    if (step.kind != Step::Kind::kCallOp || step.slot < 0 || step.onednn ||
        onednn_sets_layout(step.op->target) != layout_setting) {
      continue;
    }
    std::vector<PlannedParam> params;
    for (const Source& s : step.params) params.push_back(planned_param(s));
    Source result;
    result.kind = Source::Kind::kSlot;
    result.slot = step.slot;
    step.onednn =
        bind_onednn_step(step.op->target, params, planned_param(result));
    any = any || step.onednn != nullptr;
  }
  return any;
}

// What the planner knows of one parameter.
PlannedParam InferencePlan::Program::planned_param(const Source& s) const {
  PlannedParam p;
  if (s.kind == Source::Kind::kConstant) {
    p.kind = PlannedParam::Kind::kConstant;
    p.constant = s.constant;
  } else if (s.kind == Source::Kind::kSlot &&
             steps[s.slot].kind == Step::Kind::kConstant) {
    const c10::IValue& c = steps[s.slot].constant;
    if (c.isTensor()) {
      p.kind = PlannedParam::Kind::kAttribute;
      p.attribute = &c.toTensor();
    }
  } else if (s.kind == Source::Kind::kSlot) {
    const TensorMeta& m = slot_meta[s.slot];
    p.kind = PlannedParam::Kind::kValue;
    p.slot = s.slot;
    p.float_cpu = m.float_cpu();
    p.sizes = m.sizes;
    p.strides = m.strides;
  }
  return p;
}

// The step on oneDNN into its planned buffer (a fresh one when it has
// none); operands of other sizes than planned leave the plan as run_direct
// does.
void InferencePlan::Program::run_onednn(Step& step) {
  std::vector<const at::Tensor*>& operands = step.onednn_operands;
  operands.clear();
  for (int32_t slot : step.onednn->inputs()) {
    operands.push_back(slots[slot].isTensor() ? &slots[slot].toTensor()
                                              : nullptr);
  }
  if (diverged || !step.onednn->fits(operands)) {
    if (!diverged) {
      ++direct_fallbacks;
      diverged = true;
      stale = true;
    }
    slots[step.slot] = run_kernel(step);
    return;
  }
  at::Tensor out = step.buffer;
  if (!out.defined()) out = step.onednn->empty_output();
  step.onednn->run(operands, out);
  slots[step.slot] = std::move(out);
}

// Whether `step` maps to a direct kernel; sets direct_op, s1, s2,
// num_operands and out_meta (tensor operands come first; numbers are
// wrapped).
bool InferencePlan::Program::bind_direct(Step& step) {
  if (step.kind != Step::Kind::kCallOp) return false;
  std::optional<DirectMatch> match = match_direct_target(*step.op);
  if (!match) return false;
  step.direct_op = match->op;
  if (match->op == DirectOp::kPointwise) return bind_pointwise(step);
  if (!bind_scalars(step.op->target, step.params, &step.direct_op, &step.s1,
                    &step.s2)) {
    return false;
  }
  if (step.params.size() < match->num_operands) return false;
  if (!result_fits(step.direct_op, slot_meta[step.slot])) return false;
  if (!operands_fit(step, match->num_operands)) return false;
  step.num_operands = match->num_operands;
  step.out_meta = slot_meta[step.slot];
  return true;
}

// fx_inference.pointwise(inputs, program, scalars) with constant program
// and scalars and float32 inputs: its PointwiseKernel.
bool InferencePlan::Program::bind_pointwise(Step& step) {
  const std::vector<Source>& p = step.params;
  if (p.size() != 3 || p[0].kind != Source::Kind::kList ||
      p[1].kind != Source::Kind::kConstant || !p[1].constant.isList() ||
      p[2].kind != Source::Kind::kConstant || !p[2].constant.isList()) {
    return false;
  }
  std::vector<std::string> program;
  for (const c10::IValue& v : p[1].constant.toListRef()) {
    if (!v.isString()) return false;
    program.push_back(v.toStringRef());
  }
  std::vector<double> scalars;
  for (const c10::IValue& v : p[2].constant.toListRef()) {
    if (!v.isDouble() && !v.isInt()) return false;
    scalars.push_back(v.isDouble() ? v.toDouble()
                                   : static_cast<double>(v.toInt()));
  }
  const size_t n = p[0].items.size();
  if (!result_fits(DirectOp::kPointwise, slot_meta[step.slot])) return false;
  for (const Source& s : p[0].items) {
    if (s.kind != Source::Kind::kSlot) return false;
  }
  if (!operands_fit(step, n)) return false;
  step.pointwise = PointwiseKernel::create(program, std::move(scalars), n);
  if (step.pointwise == nullptr) return false;
  step.num_operands = n;
  step.out_meta = slot_meta[step.slot];
  return true;
}

// The tensor operands are plain CPU tensors of the result's dtype; operands
// after the first may also be numbers (not bools).
bool InferencePlan::Program::operands_fit(const Step& step,
                                          size_t num_operands) const {
  const TensorMeta& out = slot_meta[step.slot];
  const bool pointwise = step.direct_op == DirectOp::kPointwise;
  for (size_t i = 0; i < num_operands; ++i) {
    const Source& s = operand_source(step, i, pointwise);
    if (s.kind == Source::Kind::kConstant && i > 0 && is_number(s.constant) &&
        !s.constant.isBool()) {
      continue;
    }
    if (s.kind != Source::Kind::kSlot) return false;
    const TensorMeta& m = slot_meta[s.slot];
    if (!m.is_tensor || !m.plain || m.dtype != out.dtype) return false;
  }
  return true;
}

// The operands of a direct step: numbers wrapped, constants and earlier
// buffers as they are, stand-ins (in scratch memory) for the rest.
void InferencePlan::Program::make_operands(Step& step) {
  step.operands.clear();
  step.variable.clear();
  for (size_t i = 0; i < step.num_operands; ++i) {
    const Source& s = operand_source(step, i, step.pointwise != nullptr);
    if (s.kind == Source::Kind::kConstant) {
      step.operands.push_back(wrap_number(s.constant));
      continue;
    }
    const Step& producer = steps[s.slot];  // slot i is step i's result
    if (producer.kind == Step::Kind::kConstant) {
      step.operands.push_back(producer.constant.toTensor());
    } else if (producer.direct && !producer.fresh) {
      step.operands.push_back(producer.buffer);
    } else {
      step.operands.push_back(stand_in(i, s.slot, step));
    }
  }
}

// A variable operand (re-pointed each run) for operand i, reading `slot`:
// a tensor of the planned layout over scratch memory.
at::Tensor InferencePlan::Program::stand_in(size_t i, int32_t slot,
                                            Step& step) {
  const TensorMeta& m = slot_meta[slot];
  Operand op;
  op.iter_index = static_cast<int>(i + 1);
  op.slot = slot;
  op.meta = m;
  step.variable.push_back(op);
  size_t need = std::max<size_t>(m.nbytes(), 64);
  if (scratch.empty() || static_cast<size_t>(scratch.back().numel()) < need) {
    scratch.push_back(at::empty({static_cast<int64_t>(need)}, at::kByte));
  }
  return at::from_blob(scratch.back().data_ptr(), m.sizes, m.strides,
                       at::TensorOptions().dtype(m.dtype));
}

// ------------------------------------------------------------ InferencePlan

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
  std::vector<c10::IValue> again = inputs;
  *out = program->execute(std::move(inputs), /*record=*/true);
  // oneDNN convolutions write channels_last: record the layouts they give
  // before planning the rest around them.
  if (program->bind_onednn_steps(/*layout_setting=*/true)) {
    *out = program->execute(std::move(again), /*record=*/true);
  }
  program->bind_onednn_steps(/*layout_setting=*/false);
  program->plan_direct();
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
    if (step.onednn) ++s.onednn_steps;
    if (step.onednn && step.onednn->winograd()) ++s.winograd_steps;
    if (step.residual_in_place) ++s.residuals_in_place;
    if (step.pointwise) ++s.pointwise_steps;
    if (step.in_place) ++s.in_place_steps;
    if (step.direct) {
      ++s.direct_steps;
      if (step.fresh) ++s.fresh_outputs;
    } else if (step.is_call()) {
      ++s.fallback_steps;
    }
  }
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
