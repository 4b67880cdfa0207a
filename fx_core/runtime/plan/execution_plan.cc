#include "fx_core/runtime/plan/execution_plan.h"

#include <torch/nn/module.h>

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/module_path.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/runtime/plan/value_source.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

using Source = ValueSource;

}  // namespace

struct ExecutionPlan::Step {
  enum class Kind : uint8_t {
    kPlaceholder,
    kConstant,  // get_attr
    kCallOp,
    kCallModule,
    kOutput,
  };
  Kind kind = Kind::kConstant;
  int32_t slot = -1;
  const Node* node = nullptr;
  // kPlaceholder
  size_t input_index = 0;
  bool var_args = false;
  bool has_default = false;
  // kConstant (the attribute), kPlaceholder (the default)
  c10::IValue constant;
  // kCallOp / kCallModule
  const OpDef* op = nullptr;
  torch::nn::Module* module = nullptr;
  const ModuleKind* module_kind = nullptr;
  const OpSchema* schema = nullptr;
  std::vector<Source> params;    // one per schema parameter; kOutput: one
  std::vector<int32_t> release;  // slots whose last use is this step
  // Bit i: params[i] is the last read of its slot, so running the step moves
  // the value out of the slot instead of copying it (no reference count
  // traffic: a chain of ops hands each tensor on as hand-written code does).
  uint64_t move_params = 0;
  // Bit i: params[i] is a slot read once by this step and needed later, and
  // the kernel keeps its args (OpDef::keeps_args): the value is lent to the
  // kernel (moved out of its slot and back) instead of copied.
  uint64_t lend_params = 0;
};

// The part of a step run() reads on every call, packed (72 bytes) so a chain
// of small ops walks a dense array instead of Steps and their separately
// allocated parameter sources.
struct ExecutionPlan::Call {
  Step::Kind kind;
  uint8_t num_params;
  int32_t slot;
  uint32_t first_arg;      // into arg_slots_
  uint32_t first_release;  // into releases_
  uint32_t num_releases;
  uint64_t move_params;  // Step::move_params
  uint64_t lend_params;  // Step::lend_params
  const OpKernel* kernel;
  const OpSchema* schema;
  const ModuleKind* module_kind;
  torch::nn::Module* module;
};

ExecutionPlan::ExecutionPlan() = default;
ExecutionPlan::~ExecutionPlan() = default;
size_t ExecutionPlan::num_steps() const { return steps_.size(); }

std::unique_ptr<ExecutionPlan> ExecutionPlan::compile(const Graph& graph,
                                                      torch::nn::Module& root) {
  std::unique_ptr<ExecutionPlan> plan(new ExecutionPlan());
  absl::flat_hash_map<const Node*, int32_t> slot_of;
  absl::flat_hash_map<const Node*, size_t> step_of;
  size_t input_index = 0;

  auto fail = [](const Node* n, std::string_view what) -> FxError {
    return FxError(cat("cannot compile node '", n->name(), "' (",
                       opcode_name(n->op()), " ", n->target(), "): ", what));
  };

  // Builds the source of one argument value.
  auto source_of = [&slot_of](const Argument& arg) {
    return fx::source_of(arg, slot_of);
  };

  // Binds a node's args and kwargs to `schema`: one Source per parameter.
  auto bind = [&](const Node* n, const OpSchema& schema, const Node::Args& args,
                  const Node::Kwargs& kwargs, std::string_view callee) {
    std::vector<Source> params;
    std::string error;
    if (!bind_sources(schema, args, kwargs, slot_of, &params, &error)) {
      throw fail(n, cat(callee, "() ", error));
    }
    return params;
  };

  for (Node* n : graph.nodes()) {
    Step step;
    step.node = n;
    try {
      switch (n->op()) {
        case Opcode::kPlaceholder:
          step.kind = Step::Kind::kPlaceholder;
          step.input_index = input_index++;
          step.var_args = !n->target().empty() && n->target()[0] == '*';
          if (!n->args().empty()) {
            step.has_default = true;
            step.constant = constant_value(n->args()[0]);
          }
          break;
        case Opcode::kGetAttr: {
          step.kind = Step::Kind::kConstant;
          std::optional<TensorAttr> found = tensor_at(root, n->target());
          if (!found) {
            throw fail(n, cat("the module has no parameter or buffer '",
                              n->target(), "'"));
          }
          step.constant = found->tensor;
          break;
        }
        case Opcode::kCallFunction:
        case Opcode::kCallMethod: {
          step.kind = Step::Kind::kCallOp;
          step.op = OpRegistry::global().resolve(n->op(), n->target());
          if (step.op == nullptr) {
            throw fail(
                n, cat("no kernel for ", opcode_name(n->op()), " target '",
                       n->target(),
                       "': register one with fx::OpRegistry::global().add()"));
          }
          step.schema = &step.op->schema;
          step.params =
              bind(n, *step.schema, n->args(), n->kwargs(), step.op->target);
          break;
        }
        case Opcode::kCallModule: {
          step.kind = Step::Kind::kCallModule;
          step.module = module_at(root, n->target());
          if (step.module == nullptr) {
            throw fail(n,
                       cat("the module has no submodule '", n->target(), "'"));
          }
          step.module_kind = ModuleRegistry::global().find(*step.module);
          if (step.module_kind == nullptr) {
            throw fail(n, cat("module class ", step.module->name(),
                              " cannot be called: register it with "
                              "fx::ModuleRegistry::global().add()"));
          }
          step.schema = &step.module_kind->forward_schema;
          step.params = bind(n, *step.schema, n->args(), n->kwargs(),
                             cat(n->target(), ".forward"));
          break;
        }
        case Opcode::kOutput:
          step.kind = Step::Kind::kOutput;
          if (n->args().size() != 1) {
            throw fail(n, "the output node must have exactly one argument");
          }
          step.params.push_back(source_of(n->args()[0]));
          break;
      }
    } catch (const FxError&) {
      throw;
    } catch (const std::exception& e) {
      throw fail(n, e.what());
    }
    if (n->op() != Opcode::kOutput) {
      step.slot = static_cast<int32_t>(plan->num_slots_++);
      slot_of[n] = step.slot;
    }
    plan->max_params_ = std::max(plan->max_params_, step.params.size());
    step_of[n] = plan->steps_.size();
    plan->steps_.push_back(std::move(step));
  }

  // Release each value after its last use (or at once when unused).
  for (Node* n : graph.nodes()) {
    if (n->op() == Opcode::kOutput) continue;
    size_t last = step_of.at(n);
    for (Node* user : n->users()) last = std::max(last, step_of.at(user));
    plan->steps_[last].release.push_back(slot_of.at(n));
  }
  // A parameter that is its slot's last read takes the value over.
  for (Step& step : plan->steps_) {
    if (step.kind != Step::Kind::kCallOp &&
        step.kind != Step::Kind::kCallModule) {
      continue;
    }
    for (size_t i = 0; i < step.params.size() && i < 64; ++i) {
      const Source& p = step.params[i];
      if (p.kind != Source::Kind::kSlot) continue;
      auto released =
          std::find(step.release.begin(), step.release.end(), p.slot);
      if (released == step.release.end()) continue;
      bool read_later = false;
      for (size_t j = i + 1; j < step.params.size(); ++j) {
        step.params[j].for_each_slot(
            [&](int32_t slot) { read_later |= slot == p.slot; });
      }
      if (read_later) continue;
      step.move_params |= uint64_t{1} << i;
      step.release.erase(released);
    }
    bool keeps_args = step.kind == Step::Kind::kCallOp
                          ? step.op->keeps_args
                          : step.module_kind->keeps_args;
    if (!keeps_args) continue;
    for (size_t i = 0; i < step.params.size() && i < 64; ++i) {
      const Source& p = step.params[i];
      if (p.kind != Source::Kind::kSlot || (step.move_params >> i & 1)) {
        continue;
      }
      int reads = 0;
      for (const Source& q : step.params) {
        q.for_each_slot([&](int32_t slot) { reads += slot == p.slot; });
      }
      if (reads == 1) step.lend_params |= uint64_t{1} << i;
    }
  }
  plan->lay_out_calls();
  return plan;
}

void ExecutionPlan::lay_out_calls() {
  calls_.reserve(steps_.size());
  for (const Step& step : steps_) {
    Call c{};
    c.kind = step.kind;
    c.slot = step.slot;
    c.move_params = step.move_params;
    c.lend_params = step.lend_params;
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
    if (step.kind == Step::Kind::kCallOp && packed) c.kernel = &step.op->kernel;
    if (step.kind == Step::Kind::kCallModule && packed) {
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
    const Step& step = steps_[k];
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
        run_step(step, slots, buffer, inputs);
        if (step.kind == Step::Kind::kOutput) {
          return step.params[0].get(slots);
        }
      }
    } catch (const FxError& e) {
      throw FxError(cat("while running node '", step.node->name(), "' (",
                        opcode_name(step.node->op()), " ", step.node->target(),
                        "): ", e.what()));
    } catch (const c10::Error& e) {
      throw FxError(cat("while running node '", step.node->name(), "' (",
                        opcode_name(step.node->op()), " ", step.node->target(),
                        "): ", e.what_without_backtrace()));
    } catch (const std::exception& e) {
      throw FxError(cat("while running node '", step.node->name(), "' (",
                        opcode_name(step.node->op()), " ", step.node->target(),
                        "): ", e.what()));
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
void ExecutionPlan::run_step(const Step& step, std::vector<c10::IValue>& slots,
                             std::vector<c10::IValue>& buffer,
                             std::vector<c10::IValue>& inputs) const {
  switch (step.kind) {
    case Step::Kind::kPlaceholder:
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
    case Step::Kind::kConstant:
      slots[step.slot] = step.constant;
      break;
    case Step::Kind::kCallOp:
    case Step::Kind::kCallModule: {
      for (size_t i = 0; i < step.params.size(); ++i) {
        const Source& s = step.params[i];
        if (s.kind != Source::Kind::kSlot) {
          buffer[i] = s.get(slots);
        } else if (i < 64 && (step.move_params >> i & 1)) {
          buffer[i] = std::move(slots[s.slot]);
        } else {
          buffer[i] = slots[s.slot];
        }
      }
      OpArgs args(*step.schema, buffer.data());
      c10::IValue result = step.kind == Step::Kind::kCallOp
                               ? step.op->kernel(args)
                               : step.module_kind->forward(*step.module, args);
      for (size_t i = 0; i < step.params.size(); ++i) buffer[i] = {};
      slots[step.slot] = std::move(result);
      break;
    }
    case Step::Kind::kOutput:
      break;
  }
}

}  // namespace fx
