// InferencePlan::Program: loading the compiled steps and running them.
#include "fx_core/compile/inference_program.h"

#include <chrono>

namespace fx {

void InferencePlan::Program::load(CompiledSteps compiled) {
  steps.reserve(compiled.steps.size());
  for (CompiledStep& step : compiled.steps) {
    // `*args` and defaults: planned only when given explicitly.
    if (step.var_args || step.has_default) plannable = false;
    steps.emplace_back(std::move(step));
  }
  profiling = plan_profiling_requested();
  if (profiling) step_times.resize(steps.size());
  num_slots = compiled.num_slots;
  num_inputs = compiled.num_inputs;
  last_use = std::move(compiled.last_use);
  slots.assign(num_slots, c10::IValue());
  buffer_args.assign(compiled.max_params, c10::IValue());
}

// After SharedBuffers moved a block (another shape grew it): the iterators
// read their operands' and results' data pointers again (variable operands
// are re-pointed on each run anyway).
void InferencePlan::Program::follow_shared_buffers() {
  if (shared_buffers == nullptr ||
      shared_buffers->generation() == buffers_generation) {
    return;
  }
  // Views of moved buffers (concatenations in place) take the new storage
  // before any iterator reads their data pointers.
  for (Step& step : steps) {
    if (!step.cat_in_place) continue;
    const c10::Storage& moved = step.cat_shared.storage();
    step.buffer.unsafeGetTensorImpl()->set_storage_keep_dtype(moved);
    for (CatCopy& copy : step.cat_copies) {
      copy.slice.unsafeGetTensorImpl()->set_storage_keep_dtype(moved);
    }
  }
  auto follow = [](at::TensorIterator& it) {
    for (int i = 0; i < it.ntensors(); ++i) {
      it.unsafe_replace_operand(i, it.tensor_base(i).data_ptr());
    }
  };
  for (Step& step : steps) {
    if (step.iter) {
      // A fresh result's operand 0 is a tensor of the planning run, gone
      // since: run_direct re-points it on each run.
      at::TensorIterator& it = *step.iter;
      for (int i = step.fresh ? 1 : 0; i < it.ntensors(); ++i) {
        it.unsafe_replace_operand(i, it.tensor_base(i).data_ptr());
      }
    }
    for (CatCopy& copy : step.cat_copies) {
      if (copy.iter) follow(*copy.iter);
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
  const bool profiled = profiling && !record && trial_ns == nullptr;
  if (profiled) ++profiled_runs;
  for (Step& step : steps) {
    const bool timed =
        (profiled || trial_ns != nullptr) && !record && step.is_call();
    const auto start = timed ? std::chrono::steady_clock::now()
                             : std::chrono::steady_clock::time_point();
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
          // An int8 convolution module runs on the plan's own kernel from
          // the first recording run on (its input's meta is recorded by
          // then): LibTorch 1.13's quantized::conv2d, which the registry
          // would call, fails in some processes ("could not create a
          // primitive descriptor for a reorder primitive", BENCHMARKS.md).
          if (record && step.kind == Step::Kind::kCallModule) {
            bind_module_step(step);
          }
          if (step.forwards >= 0 && steps[step.forwards].ran_onednn) {
            slots[step.slot] = slots[step.forwards];
          } else if (step.onednn) {
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
    if (timed) {
      const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::steady_clock::now() - start)
                             .count();
      const size_t index = &step - steps.data();
      if (trial_ns != nullptr) {
        (*trial_ns)[index] = ns;
      } else {
        step_times[index].add(ns);
      }
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
  if (step.cat_in_place) {
    run_cat_in_place(step);
    return;
  }
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

}  // namespace fx
