#include "fx_core/execution_plan.h"

#include <torch/nn/module.h>

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "fx_core/error.h"
#include "fx_core/graph.h"
#include "fx_core/module_path.h"
#include "fx_core/module_registry.h"
#include "fx_core/op_registry.h"
#include "fx_core/strings.h"
#include "fx_core/value.h"
#include "fx_core/value_source.h"

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
          step.op = OpRegistry::global().find(n->op(), n->target());
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
  return plan;
}

c10::IValue ExecutionPlan::run(std::vector<c10::IValue> inputs) const {
  std::vector<c10::IValue> slots(num_slots_);
  std::vector<c10::IValue> buffer(max_params_);
  for (const Step& step : steps_) {
    try {
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
            buffer[i] =
                s.kind == Source::Kind::kSlot ? slots[s.slot] : s.get(slots);
          }
          OpArgs args(*step.schema, buffer.data());
          c10::IValue result =
              step.kind == Step::Kind::kCallOp
                  ? step.op->kernel(args)
                  : step.module_kind->forward(*step.module, args);
          for (size_t i = 0; i < step.params.size(); ++i) buffer[i] = {};
          slots[step.slot] = std::move(result);
          break;
        }
        case Step::Kind::kOutput:
          return step.params[0].get(slots);
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
    for (int32_t slot : step.release) slots[slot] = c10::IValue();
  }
  return c10::IValue();
}

}  // namespace fx
