#include "fx_core/compile/execution_plan.h"

#include <torch/nn/module.h>

#include <algorithm>
#include <utility>

#include "fx_core/compile/compiled_steps.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

using Source = ValueSource;
using Kind = CompiledStep::Kind;

// A call that takes its last-read parameters over (CompiledStep::last_reads)
// leaves nothing in their slots to release.
void drop_taken_over(CompiledStep& step) {
  for (size_t i = 0; i < step.params.size() && i < 64; ++i) {
    if (!(step.last_reads >> i & 1)) continue;
    auto it = std::find(step.release.begin(), step.release.end(),
                        step.params[i].slot);
    if (it != step.release.end()) step.release.erase(it);
  }
}

// Bit i: params[i] is a slot the step reads once but does not take over, and
// the kernel keeps its args (OpDef::keeps_args): the value is lent to the
// kernel (moved out of its slot and back) instead of copied.
uint64_t lent_params(const CompiledStep& step) {
  uint64_t lent = 0;
  if (!step.is_call() || !step.keeps_args()) return lent;
  for (size_t i = 0; i < step.params.size() && i < 64; ++i) {
    const Source& p = step.params[i];
    if (p.kind != Source::Kind::kSlot || (step.last_reads >> i & 1)) continue;
    int reads = 0;
    for (const Source& q : step.params) {
      q.for_each_slot([&](int32_t slot) { reads += slot == p.slot; });
    }
    if (reads == 1) lent |= uint64_t{1} << i;
  }
  return lent;
}

}  // namespace

// The part of a step run() reads on every call, packed (72 bytes) so a chain
// of small ops walks a dense array instead of steps and their separately
// allocated parameter sources.
struct ExecutionPlan::Call {
  Kind kind;
  uint8_t num_params;
  int32_t slot;
  uint32_t first_arg;      // into arg_slots_
  uint32_t first_release;  // into releases_
  uint32_t num_releases;
  // Bit i: params[i] is the last read of its slot, so running the step moves
  // the value out of the slot instead of copying it (no reference count
  // traffic: a chain of ops hands each tensor on as hand-written code does).
  uint64_t move_params;
  uint64_t lend_params;  // lent_params()
  const OpKernel* kernel;
  const OpSchema* schema;
  const ModuleKind* module_kind;
  torch::nn::Module* module;
};

namespace {

std::unique_ptr<GraphExecutor> compile_execution_plan(
    const Graph& graph, torch::nn::Module& root,
    const ForeignTargets* foreign) {
  return ExecutionPlan::compile(graph, root, foreign);
}

// Every GraphModule of a program this file is linked into compiles its graph
// to an ExecutionPlan (graph_executor.h).
[[maybe_unused]] const bool kInstalled =
    (set_graph_executor_factory(&compile_execution_plan), true);

}  // namespace

ExecutionPlan::ExecutionPlan() = default;
ExecutionPlan::~ExecutionPlan() = default;
size_t ExecutionPlan::num_steps() const { return steps_.size(); }

std::unique_ptr<ExecutionPlan> ExecutionPlan::compile(
    const Graph& graph, torch::nn::Module& root,
    const ForeignTargets* foreign) {
  std::unique_ptr<ExecutionPlan> plan(new ExecutionPlan());
  CompiledSteps compiled = compile_steps(graph, root, foreign);
  plan->steps_ = std::move(compiled.steps);
  plan->num_slots_ = compiled.num_slots;
  plan->max_params_ = compiled.max_params;
  for (CompiledStep& step : plan->steps_) drop_taken_over(step);
  plan->lay_out_calls();
  return plan;
}

void ExecutionPlan::lay_out_calls() {
  calls_.reserve(steps_.size());
  for (const CompiledStep& step : steps_) {
    Call c{};
    c.kind = step.kind;
    c.slot = step.slot;
    c.move_params = step.last_reads;
    c.lend_params = lent_params(step);
    c.first_arg = static_cast<uint32_t>(arg_slots_.size());
    c.first_release = static_cast<uint32_t>(releases_.size());
    c.num_releases = static_cast<uint32_t>(step.release.size());
    releases_.insert(releases_.end(), step.release.begin(), step.release.end());
    bool packed = step.params.size() <= 64;
    for (const Source& p : step.params) {
      arg_slots_.push_back(p.kind == Source::Kind::kSlot ? p.slot : -1);
    }
    c.num_params = static_cast<uint8_t>(packed ? step.params.size() : 0);
    c.schema = step.schema;
    if (step.kind == Kind::kCallOp && packed) c.kernel = &step.op->kernel;
    if (step.kind == Kind::kCallModule && packed) {
      c.module_kind = step.module_kind;
      c.module = step.module;
    }
    calls_.push_back(c);
  }
}

c10::IValue ExecutionPlan::run(std::vector<c10::IValue> inputs) const {
  std::vector<c10::IValue> slots(num_slots_);
  std::vector<c10::IValue> buffer(max_params_);
  for (size_t k = 0; k < steps_.size(); ++k) {
    const Call& c = calls_[k];
    const CompiledStep& step = steps_[k];
    try {
      if (c.kernel != nullptr || c.module_kind != nullptr) {
        // The hot path: a call with its arguments in slots.
        const int32_t* arg_slot = arg_slots_.data() + c.first_arg;
        for (size_t i = 0; i < c.num_params; ++i) {
          if (arg_slot[i] < 0) {
            buffer[i] = step.params[i].get(slots);
          } else if ((c.move_params | c.lend_params) >> i & 1) {
            buffer[i] = std::move(slots[arg_slot[i]]);
          } else {
            buffer[i] = slots[arg_slot[i]];
          }
        }
        OpArgs args(*c.schema, buffer.data());
        c10::IValue result = c.kernel != nullptr
                                 ? (*c.kernel)(args)
                                 : c.module_kind->forward(*c.module, args);
        for (size_t i = 0; i < c.num_params; ++i) {
          if (c.lend_params >> i & 1) {
            slots[arg_slot[i]] = std::move(buffer[i]);  // given back
          } else {
            buffer[i] = c10::IValue();
          }
        }
        slots[c.slot] = std::move(result);
      } else {
        run_step(step, c, slots, buffer, inputs);
        if (step.kind == Kind::kOutput) return step.params[0].get(slots);
      }
    } catch (const std::exception& e) {
      throw node_error(*step.node, e);
    }
    const int32_t* release = releases_.data() + c.first_release;
    for (uint32_t i = 0; i < c.num_releases; ++i) {
      slots[release[i]] = c10::IValue();
    }
  }
  return c10::IValue();
}

// Everything but a packed call: placeholders, attributes, the output (whose
// value run() reads) and calls with more than 64 parameters.
void ExecutionPlan::run_step(const CompiledStep& step, const Call& c,
                             std::vector<c10::IValue>& slots,
                             std::vector<c10::IValue>& buffer,
                             std::vector<c10::IValue>& inputs) const {
  switch (step.kind) {
    case Kind::kPlaceholder:
      if (step.var_args) {
        std::vector<c10::IValue> rest;
        for (size_t i = step.input_index; i < inputs.size(); ++i) {
          rest.push_back(std::move(inputs[i]));
        }
        slots[step.slot] = make_tuple(std::move(rest));
      } else if (step.input_index < inputs.size()) {
        slots[step.slot] = std::move(inputs[step.input_index]);
      } else if (step.has_default) {
        slots[step.slot] = step.constant;
      } else {
        throw FxError(cat("forward() missing required argument '",
                          step.node->target(), "'"));
      }
      break;
    case Kind::kConstant:
      slots[step.slot] = step.constant;
      break;
    case Kind::kCallOp:
    case Kind::kCallModule:
      slots[step.slot] = call_step(step, c.move_params, slots, buffer);
      break;
    case Kind::kOutput:
      break;
  }
}

}  // namespace fx
