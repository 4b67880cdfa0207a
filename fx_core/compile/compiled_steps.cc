#include "fx_core/compile/compiled_steps.h"

#include <c10/util/Exception.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/foreign_targets.h"
#include "fx_core/runtime/module_path.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

// The one wording of "this node cannot run".
FxError compile_error(const Node* n, std::string_view what) {
  return FxError(cat("cannot compile node '", n->name(), "' (",
                     opcode_name(n->op()), " ", n->target(), "): ", what));
}

// Resolves and binds nodes one at a time, in graph order, giving each node
// but the output the next slot.
class StepCompiler {
 public:
  StepCompiler(torch::nn::Module& root, const ForeignTargets* foreign,
               CompiledSteps& out)
      : root_(root), foreign_(foreign), out_(out) {}

  void add(const Node* n) {
    CompiledStep step = compile_node(n);
    if (n->op() != Opcode::kOutput) {
      step.slot = static_cast<int32_t>(out_.num_slots++);
      slot_of_[n] = step.slot;
    }
    rebind_inplace(n);
    out_.max_params = std::max(out_.max_params, step.params.size());
    out_.steps.push_back(std::move(step));
  }

 private:
  // torch.fx's code for an in-place operator (is_inplace_operator) on a node
  // `a`: after `a X= b;  n = a`, later reads of `a` read n's value; after
  // `a[i] = v;  n = a`, reads of n read `a`.
  void rebind_inplace(const Node* n) {
    if (n->op() != Opcode::kCallFunction || !is_inplace_operator(n->target()) ||
        n->args().empty() || !n->args()[0].is_node()) {
      return;
    }
    const Node* left = n->args()[0].as_node();
    if (n->target() == "operator.setitem") {
      slot_of_[n] = slot_of_.at(left);
    } else {
      slot_of_[left] = slot_of_.at(n);
    }
  }

  // One node's step; any failure becomes compile_error naming the node.
  CompiledStep compile_node(const Node* n) {
    CompiledStep step;
    step.node = n;
    try {
      switch (n->op()) {
        case Opcode::kPlaceholder:
          resolve_placeholder(n, step);
          break;
        case Opcode::kGetAttr:
          resolve_attribute(n, step);
          break;
        case Opcode::kCallFunction:
        case Opcode::kCallMethod:
          resolve_op(n, step);
          break;
        case Opcode::kCallModule:
          resolve_module(n, step);
          break;
        case Opcode::kOutput:
          bind_output(n, step);
          break;
      }
    } catch (const FxError&) {
      throw;
    } catch (const std::exception& e) {
      throw compile_error(n, e.what());
    }
    return step;
  }

  void resolve_placeholder(const Node* n, CompiledStep& step) {
    step.kind = CompiledStep::Kind::kPlaceholder;
    step.input_index = out_.num_inputs++;
    step.var_args = !n->target().empty() && n->target()[0] == '*';
    if (!n->args().empty()) {
      step.has_default = true;
      step.constant = constant_value(n->args()[0]);
    }
  }

  void resolve_attribute(const Node* n, CompiledStep& step) {
    step.kind = CompiledStep::Kind::kConstant;
    std::optional<TensorAttr> found = tensor_at(root_, n->target());
    if (found) {
      step.constant = found->tensor;
      return;
    }
    const ForeignAttribute* object =
        foreign_ != nullptr ? foreign_->find_attribute(n->target()) : nullptr;
    if (object == nullptr) {
      throw compile_error(
          n, cat("the module has no parameter or buffer '", n->target(), "'"));
    }
    step.constant = object->value;
  }

  void resolve_op(const Node* n, CompiledStep& step) {
    step.kind = CompiledStep::Kind::kCallOp;
    step.op = resolve_target(foreign_, n->op(), n->target());
    if (step.op == nullptr) {
      throw compile_error(n, no_kernel_message(n->op(), n->target()));
    }
    if (std::unique_ptr<OpDef> aten = aten_binding_instead(*n, *step.op)) {
      step.node_op = std::move(aten);
      step.op = step.node_op.get();
    } else if (step.op->specialize) {
      try {
        step.node_op = step.op->specialize(*n);
      } catch (const FxError& e) {
        throw compile_error(n, e.what());
      }
      step.op = step.node_op.get();
    }
    step.schema = &step.op->schema;
    step.params = bind(n, *step.schema, step.op->target);
  }

  void resolve_module(const Node* n, CompiledStep& step) {
    step.kind = CompiledStep::Kind::kCallModule;
    step.module = module_at(root_, n->target());
    if (step.module == nullptr) {
      throw compile_error(
          n, cat("the module has no submodule '", n->target(), "'"));
    }
    step.module_kind = ModuleRegistry::global().find(*step.module);
    if (step.module_kind == nullptr) {
      throw compile_error(n, cat("module class ", step.module->name(),
                                 " cannot be called: register it with "
                                 "fx::ModuleRegistry::global().add()"));
    }
    step.schema = &step.module_kind->forward_schema;
    step.params = bind(n, *step.schema, cat(n->target(), ".forward"));
  }

  void bind_output(const Node* n, CompiledStep& step) {
    step.kind = CompiledStep::Kind::kOutput;
    if (n->args().size() != 1) {
      throw compile_error(n, "the output node must have exactly one argument");
    }
    step.params.push_back(source_of(n->args()[0], slot_of_));
  }

  // The ATen operator of the node's target, bound to the node, when the
  // node's call does not bind to the hand-written `op` but does to the
  // operator's overloads (a keyword `op`'s signature leaves out:
  // torch.div(x, y, out=None)); nullptr otherwise, so that `op`'s own
  // message reports a call neither takes.
  static std::unique_ptr<OpDef> aten_binding_instead(const Node& n,
                                                     const OpDef& op) {
    if (op.specialize) return nullptr;  // already the ATen operator's
    std::vector<std::optional<Argument>> bound;
    std::string error;
    if (bind_node_arguments(op.schema, n.args(), n.kwargs(), &bound, &error)) {
      return nullptr;
    }
    const OpDef* aten = OpRegistry::global().resolve_aten(n.op(), n.target());
    if (aten == nullptr || !aten->specialize) return nullptr;
    try {
      return aten->specialize(n);
    } catch (const FxError&) {
      return nullptr;
    }
  }

  // The node's args and kwargs bound to `schema`: one source per parameter.
  std::vector<ValueSource> bind(const Node* n, const OpSchema& schema,
                                std::string_view callee) {
    std::vector<ValueSource> params;
    std::string error;
    if (!bind_sources(schema, n->args(), n->kwargs(), slot_of_, &params,
                      &error)) {
      throw compile_error(n, cat(callee, "() ", error));
    }
    return params;
  }

  torch::nn::Module& root_;
  const ForeignTargets* foreign_;
  CompiledSteps& out_;
  SlotMap slot_of_;
};

// Each slot's last use (the last step reading it, or its own step when none
// does), and its release after that step. Reads are the steps' sources, not
// node users: an in-place operator makes later users of a node read another
// slot (rebind_inplace).
void assign_releases(CompiledSteps& out) {
  out.last_use.assign(out.num_slots, 0);
  for (size_t k = 0; k < out.steps.size(); ++k) {
    const CompiledStep& step = out.steps[k];
    if (step.slot >= 0) out.last_use[step.slot] = k;
    for (const ValueSource& p : step.params) {
      p.for_each_slot([&](int32_t slot) {
        out.last_use[slot] = std::max(out.last_use[slot], k);
      });
    }
  }
  for (size_t slot = 0; slot < out.num_slots; ++slot) {
    out.steps[out.last_use[slot]].release.push_back(static_cast<int32_t>(slot));
  }
}

// A call's parameters that are the last read of a slot the step releases.
void mark_last_reads(CompiledStep& step) {
  const std::vector<ValueSource>& params = step.params;
  for (size_t i = 0; i < params.size() && i < 64; ++i) {
    const ValueSource& p = params[i];
    if (p.kind != ValueSource::Kind::kSlot) continue;
    if (std::find(step.release.begin(), step.release.end(), p.slot) ==
        step.release.end()) {
      continue;
    }
    bool read_later = false;
    for (size_t j = i + 1; j < params.size(); ++j) {
      params[j].for_each_slot(
          [&](int32_t slot) { read_later |= slot == p.slot; });
    }
    if (!read_later) step.last_reads |= uint64_t{1} << i;
  }
}

}  // namespace

bool CompiledStep::keeps_args() const {
  switch (kind) {
    case Kind::kCallOp:
      return op->keeps_args;
    case Kind::kCallModule:
      return module_kind->keeps_args;
    default:
      return false;
  }
}

c10::IValue CompiledStep::call(OpArgs& args) const {
  return kind == Kind::kCallOp ? op->kernel(args)
                               : module_kind->forward(*module, args);
}

CompiledSteps compile_steps(const Graph& graph, torch::nn::Module& root,
                            const ForeignTargets* foreign) {
  CompiledSteps out;
  StepCompiler compiler(root, foreign, out);
  for (Node* n : graph.nodes()) compiler.add(n);
  assign_releases(out);
  for (CompiledStep& step : out.steps) {
    if (step.is_call()) mark_last_reads(step);
  }
  return out;
}

c10::IValue call_step(const CompiledStep& step, uint64_t move,
                      std::vector<c10::IValue>& slots,
                      std::vector<c10::IValue>& buffer) {
  const size_t n = step.params.size();
  for (size_t i = 0; i < n; ++i) {
    const ValueSource& s = step.params[i];
    if (s.kind != ValueSource::Kind::kSlot) {
      buffer[i] = s.get(slots);
    } else if (i < 64 && (move >> i & 1)) {
      buffer[i] = std::move(slots[s.slot]);
    } else {
      buffer[i] = slots[s.slot];
    }
  }
  OpArgs args(*step.schema, buffer.data());
  c10::IValue result = step.call(args);
  for (size_t i = 0; i < n; ++i) buffer[i] = c10::IValue();
  return result;
}

FxError node_error(const Node& node, const std::exception& e) {
  const char* what = e.what();
  if (auto* c10_error = dynamic_cast<const c10::Error*>(&e)) {
    what = c10_error->what_without_backtrace();
  }
  return FxError(cat("while running node '", node.name(), "' (",
                     opcode_name(node.op()), " ", node.target(), "): ", what));
}

}  // namespace fx
