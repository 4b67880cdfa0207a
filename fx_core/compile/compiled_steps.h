// fx::compile_steps: the step compiler both plans are built on
// (ExecutionPlan, InferencePlan). It turns a Graph into one CompiledStep per
// node, in graph order, with everything the generated code would look up by
// name on every call already resolved:
//  - call_function / call_method targets to their kernel (the
//    GraphModule's foreign targets first, then the OpRegistry),
//    call_module targets to the module and its ModuleKind, get_attr targets
//    to the tensor (else to the GraphModule's foreign attribute's value);
//  - each call's args and kwargs bound to the kernel's parameters, one
//    ValueSource per parameter (defaults filled in);
//  - one value slot per node but the output (slot i is step i's value);
//    reads bound as torch.fx's code binds names: after an in-place
//    operator `a X= b;  n = a` (is_inplace_operator, fx_core/ir/codegen.h)
//    later reads of `a` read n's slot, and a setitem node reads as `a`;
//  - each slot's last use, the slots to release after each step, and the
//    parameters that are the last read of their slot (a plan may move the
//    value out of its slot instead of copying it).
// A plan adds only its execution strategy on top.
//
// Errors: compile_steps throws FxError "cannot compile node 'NAME' (OPCODE
// TARGET): WHY" on anything that could not run (an unknown target, with how
// to register one; arguments that do not bind; a missing attribute or
// submodule); node_error() words a failure while running a node. Both plans
// report through these, so they say the same thing.
//
// Ownership and invalidation: the steps point into the Graph (nodes), the
// registries (kernels, schemas) and the root module (submodules) they were
// compiled against, and hold the attribute tensors found there. Recompile
// after editing the graph or replacing a submodule or attribute. Compiled
// steps are immutable: any number of threads may read them at once.
#ifndef FX_CORE_COMPILE_COMPILED_STEPS_H_
#define FX_CORE_COMPILE_COMPILED_STEPS_H_

#include <ATen/core/ivalue.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <vector>

#include "fx_core/compile/value_source.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/support/error.h"

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace fx {

class ForeignTargets;
class Graph;
class Node;
struct ModuleKind;

// One node, resolved and bound.
struct CompiledStep {
  enum class Kind : uint8_t {
    kPlaceholder,
    kConstant,  // get_attr
    kCallOp,    // call_function / call_method
    kCallModule,
    kOutput,
  };
  Kind kind = Kind::kConstant;
  int32_t slot = -1;  // the node's value; -1 for the output
  const Node* node = nullptr;
  // kPlaceholder: its position among the inputs, `*args`, a default.
  size_t input_index = 0;
  bool var_args = false;
  bool has_default = false;
  // kConstant: the attribute; kPlaceholder: the default.
  c10::IValue constant;
  // kCallOp: op and schema; kCallModule: module, module_kind and schema.
  const OpDef* op = nullptr;
  // When `op` was specialised for this node (OpDef::specialize): owns it.
  std::shared_ptr<const OpDef> node_op;
  torch::nn::Module* module = nullptr;
  const ModuleKind* module_kind = nullptr;
  const OpSchema* schema = nullptr;
  // Calls: one source per schema parameter; kOutput: the output value.
  std::vector<ValueSource> params;
  // Slots whose last use is this step (including this step's own value when
  // nothing reads it): release them once the step has run.
  std::vector<int32_t> release;
  // Bit i (i < 64): params[i] reads a slot directly, that slot is in
  // `release`, and no later parameter of this step reads it. The step is
  // the value's last reader and may take it over.
  uint64_t last_reads = 0;

  bool is_call() const {
    return kind == Kind::kCallOp || kind == Kind::kCallModule;
  }
  // The kernel only reads its arguments (OpDef / ModuleKind::keeps_args).
  bool keeps_args() const;
  // Runs the kernel or the module's forward on bound arguments.
  c10::IValue call(OpArgs& args) const;
};

// A graph's steps and the sizes a run needs.
struct CompiledSteps {
  std::vector<CompiledStep> steps;  // graph order
  size_t num_slots = 0;
  size_t max_params = 0;  // the most parameters of any step
  size_t num_inputs = 0;  // placeholders
  // Per slot: the index of the last step that reads it (its own step when
  // nothing does).
  std::vector<size_t> last_use;
};

// Compiles `graph` against `root`, the module owning its attributes and
// submodules; call_function / call_method targets resolve in `foreign`
// first when given (the GraphModule's own targets, foreign_targets.h), then
// in OpRegistry::global(). Throws FxError naming the first node that cannot
// run.
CompiledSteps compile_steps(const Graph& graph, torch::nn::Module& root,
                            const ForeignTargets* foreign = nullptr);

// Runs a call step outside any fast path: gathers its parameters into
// `buffer` (at least step.params.size() long; moving out of their slot the
// parameters whose bit is set in `move`, copying the others), calls the
// kernel, and leaves `buffer` empty again. May throw anything the kernel
// throws.
c10::IValue call_step(const CompiledStep& step, uint64_t move,
                      std::vector<c10::IValue>& slots,
                      std::vector<c10::IValue>& buffer);

// "while running node 'NAME' (OPCODE TARGET): WHAT", the error a plan throws
// when running `node` failed with `e` (c10 errors without their backtrace).
FxError node_error(const Node& node, const std::exception& e);

}  // namespace fx

#endif  // FX_CORE_COMPILE_COMPILED_STEPS_H_
