// InferencePlan::Program: binding steps to kernels: oneDNN steps and their
// buffers, direct ATen kernels on TensorIterators, fused pointwise kernels,
// and the operands they are built on.
#include <ATen/quantized/Quantizer.h>

#include "fx_core/compile/inference_program.h"
#include "fx_core/compile/pooling_steps.h"
#include "fx_core/compile/quantized_steps.h"
#include "fx_core/runtime/ops/inference_op_names.h"

namespace fx {

std::vector<const ValueSource*> positional_sources(
    const std::vector<ValueSource>& params) {
  std::vector<const ValueSource*> out;
  auto no_kwargs = [](const ValueSource& s) {
    return s.kind == ValueSource::Kind::kDict
               ? s.items.empty()
               : s.kind == ValueSource::Kind::kConstant &&
                     s.constant.isGenericDict() &&
                     s.constant.toGenericDict().empty();
  };
  if (params.size() == 2 && params[0].kind == ValueSource::Kind::kTuple &&
      no_kwargs(params[1])) {
    for (const ValueSource& s : params[0].items) out.push_back(&s);
  } else {
    for (const ValueSource& s : params) out.push_back(&s);
  }
  return out;
}

// A oneDNN step's result buffer: its residual's when it sums in place, none
// when its group escapes (a fresh tensor each run), else one from the pool.
void InferencePlan::Program::place_onednn(Step& step, AliasGroups& groups,
                                          const GroupLiveness& live,
                                          BufferPool& pool) {
  const int32_t r = groups.find(step.slot);
  step.out_meta = slot_meta[step.result_slot()];
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
  step.buffer = c10::isQIntType(step.out_meta.dtype)
                    ? quantized_buffer(step, r, pool)
                    : pool.take(step.out_meta, r, &buffer_bytes);
}

// A quint8 step's planned buffer: uint8 memory from the pool seen as a
// quint8 tensor with the step's output scale and zero point (the pool's
// tensors are plain; a quantized tensor cannot be one). A dynamic plan's
// buffers move when a larger shape is planned, so its quint8 results are
// fresh tensors each run instead.
at::Tensor InferencePlan::Program::quantized_buffer(Step& step, int32_t group,
                                                    BufferPool& pool) {
  if (shared_buffers != nullptr) {
    step.fresh = true;
    return at::Tensor();
  }
  TensorMeta bytes = step.out_meta;
  bytes.dtype = at::kByte;
  at::Tensor memory = pool.take(bytes, group, &buffer_bytes);
  const at::Tensor like = step.onednn->empty_output();
  at::Tensor out = at::from_blob_quantized_per_tensor_affine(
      memory.data_ptr(), memory.sizes(), memory.strides(), [memory](void*) {},
      like.q_scale(), like.q_zero_point(),
      at::TensorOptions().dtype(like.scalar_type()));
  // from_blob takes the scale as a float: the step's own (a double) again.
  at::set_quantizer_(
      out, at::make_per_tensor_affine_quantizer(
               like.q_scale(), like.q_zero_point(), like.scalar_type()));
  return out;
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
// whose result layout is oneDNN's own (convolutions) or the others, with
// the quantized ops the plan computes itself (quantized_steps.h); returns
// whether any was. (Module calls: the int8 convolutions and linears are
// bound by the recording run itself, execute() calling bind_module_step;
// the pooling modules here, with the other steps that keep the layout.)
bool InferencePlan::Program::bind_onednn_steps(bool layout_setting) {
  bool any = false;
  for (Step& step : steps) {
    if (step.kind != Step::Kind::kCallOp || step.slot < 0 || step.onednn ||
        onednn_sets_layout(step.op->target) != layout_setting) {
      continue;
    }
    std::vector<PlannedParam> params;
    for (const Source& s : step.params) params.push_back(planned_param(s));
    const PlannedParam out = planned_result(step);
    step.onednn = bind_onednn_step(step.op->target, params, out);
    if (!step.onednn && !layout_setting) {
      std::vector<PlannedParam> positional;
      for (const Source* s : positional_sources(step.params)) {
        positional.push_back(planned_param(*s));
      }
      step.onednn = bind_quantized_op_step(step.op->target, positional, out);
    }
    any = any || step.onednn != nullptr;
  }
  if (!layout_setting) {
    fuse_depthwise_convs();
    any = bind_pooling_steps() || any;
    fuse_quantized_clamps();
  }
  return any;
}

// The pooling modules and calls (pooling_steps.h) on float32 CPU inputs as the
// last recording run laid them out (after the convolutions chose theirs);
// whether any was bound. Global averages round as oneDNN does only in
// graphs the inference passes wrote (fx_inference ops).
bool InferencePlan::Program::bind_pooling_steps() {
  PoolingRounding rounding = PoolingRounding::kExact;
  for (const Step& step : steps) {
    if (step.kind == Step::Kind::kCallOp &&
        !inference_op(step.op->target).empty()) {
      rounding = PoolingRounding::kFloat32;
      break;
    }
  }
  bool any = false;
  for (Step& step : steps) {
    if (step.kind == Step::Kind::kCallOp) {
      if (step.slot < 0 || step.onednn || !is_pooling_call(step.op->target)) {
        continue;
      }
      std::vector<PlannedParam> args;
      for (const Source* s : positional_sources(step.params)) {
        args.push_back(planned_param(*s));
      }
      step.onednn = bind_pooling_call_step(step.op->target, args,
                                           planned_result(step), rounding);
      any = any || step.onednn != nullptr;
      continue;
    }
    if (step.kind != Step::Kind::kCallModule || step.slot < 0 || step.onednn ||
        step.module == nullptr || step.module_kind == nullptr ||
        step.params.empty() || step.params[0].kind != Source::Kind::kSlot) {
      continue;
    }
    const int32_t input = step.params[0].slot;
    const TensorMeta& in = slot_meta[input];
    if (!in.float_cpu()) continue;
    step.onednn = bind_pooling_module_step(
        *step.module_kind, *step.module, input, in.sizes, in.strides, rounding);
    any = any || step.onednn != nullptr;
  }
  return any;
}

// How many parameters of all steps (the output's included) read each slot.
std::vector<size_t> InferencePlan::Program::reader_counts() const {
  std::vector<size_t> readers(num_slots, 0);
  for (const Step& step : steps) {
    for (const Source& s : step.params) {
      s.for_each_slot([&](int32_t slot) { ++readers[slot]; });
    }
  }
  return readers;
}

// A ReLU6 / Hardtanh / ReLU module whose input is an int8 convolution
// step's result and its only use becomes a clip of that step
// (quantized_steps.h); the module's call then forwards the result.
void InferencePlan::Program::fuse_quantized_clamps() {
  const std::vector<size_t> readers = reader_counts();
  for (Step& step : steps) {
    if (step.kind != Step::Kind::kCallModule || step.module == nullptr ||
        step.module_kind == nullptr || step.slot < 0 || step.onednn ||
        step.params.empty() || step.params[0].kind != Source::Kind::kSlot) {
      continue;
    }
    const int32_t input = step.params[0].slot;
    Step& producer = steps[input];
    if (!producer.onednn || readers[input] != 1) continue;
    const auto bounds = module_clamp(*step.module_kind, *step.module);
    if (bounds &&
        fuse_quantized_clamp(*producer.onednn, bounds->first, bounds->second)) {
      step.forwards = input;
    }
  }
}

// A depthwise convolution whose input is a 1x1 convolution's result, read
// by nothing else, joins that convolution's step (bind_depthwise_fusion:
// oneDNN's fused kernel, where it pays): the step writes the depthwise
// result and the depthwise call forwards it. A run whose operands leave the
// plan at the 1x1 step computes the 1x1 result there (the registry's
// kernel), and the depthwise call runs on it as any unplanned call does.
void InferencePlan::Program::fuse_depthwise_convs() {
  const std::vector<size_t> readers = reader_counts();
  auto conv_step = [](const Step& s) {
    return s.kind == Step::Kind::kCallOp && s.onednn && s.fuses < 0 &&
           inference_op(s.op->target) == "conv2d" && !s.params.empty();
  };
  for (Step& step : steps) {
    if (!conv_step(step) || step.params[0].kind != Source::Kind::kSlot) {
      continue;
    }
    const int32_t input = step.params[0].slot;
    Step& producer = steps[input];
    if (!conv_step(producer) || readers[input] != 1) continue;
    std::vector<PlannedParam> first, second;
    for (const Source& s : producer.params) first.push_back(planned_param(s));
    for (const Source& s : step.params) second.push_back(planned_param(s));
    std::unique_ptr<OnednnStep> fused =
        bind_depthwise_fusion(first, second, planned_result(step));
    if (fused == nullptr) continue;
    producer.onednn = std::move(fused);
    producer.fuses = step.slot;
    step.onednn.reset();
    step.forwards = input;
  }
}

// A module call the plan runs itself (quantized_steps.h: 2-d quantized
// convolutions and linears on a quint8 input); whether it was bound. The
// recording run calls it before the step runs, its input's meta recorded.
bool InferencePlan::Program::bind_module_step(Step& step) {
  if (step.slot < 0 || step.onednn || step.module == nullptr ||
      step.module_kind == nullptr || step.params.empty() ||
      step.params[0].kind != Source::Kind::kSlot) {
    return false;
  }
  const int32_t input = step.params[0].slot;
  const TensorMeta& in = slot_meta[input];
  if (!in.is_tensor || in.dtype != at::kQUInt8 || !in.device.is_cpu()) {
    return false;
  }
  step.onednn = bind_quantized_module_step(*step.module_kind, *step.module,
                                           input, in.sizes);
  return step.onednn != nullptr;
}

// What the planner knows of a step's result (its slot's recorded layout).
PlannedParam InferencePlan::Program::planned_result(const Step& step) const {
  Source result;
  result.kind = Source::Kind::kSlot;
  result.slot = step.slot;
  return planned_param(result);
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
  step.ran_onednn = false;
  if (diverged || !step.onednn->fits(operands)) {
    if (!diverged) {
      ++direct_fallbacks;
      diverged = true;
      stale = true;
    }
    slots[step.slot] = run_kernel(step);
    return;
  }
  step.ran_onednn = true;
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

}  // namespace fx
