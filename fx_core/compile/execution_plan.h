// fx::ExecutionPlan: the executable form of a Graph, what
// GraphModule::recompile() builds next to the Python code.
//
// Compiling (the step compiler, compiled_steps.h) resolves everything
// torch.fx's generated code looks up by name on every call: call_function /
// call_method targets become OpRegistry kernels with their arguments already
// bound to the kernel's parameters, call_module targets become module
// pointers with their ModuleKind, get_attr targets become the tensors
// themselves. Values live in numbered slots, and each slot is released right
// after its last use, as the generated code does with `x = None`. On top of
// that the plan's strategy: a value's last reader takes it over, a built-in
// kernel is lent a value the graph still needs, and run() walks a packed
// array of calls.
//
// Compiling fails (FxError naming the node, the target and how to register
// it) on anything that could not run: an unknown target, arguments that do
// not bind, an attribute path that does not exist.
//
// A plan holds raw pointers into the module it was compiled against and the
// tensors it found there: recompile after replacing a submodule or attribute
// (in-place changes to a tensor are seen without recompiling).
// run() is const and keeps its state on the stack, so one plan may run on
// several threads at once.
//
// An ExecutionPlan is the GraphExecutor (fx_core/runtime/graph_executor.h)
// every GraphModule compiles with: linking this library in installs it.
#ifndef FX_CORE_COMPILE_EXECUTION_PLAN_H_
#define FX_CORE_COMPILE_EXECUTION_PLAN_H_

#include <ATen/core/ivalue.h>

#include <memory>
#include <string>
#include <vector>

#include "fx_core/runtime/graph_executor.h"

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace fx {

class ForeignTargets;
class Graph;
struct CompiledStep;

class ExecutionPlan final : public GraphExecutor {
 public:
  // Compiles `graph` against `root`, the module that owns its attributes and
  // submodules, and `foreign`, its own targets (compile_steps). Throws
  // FxError.
  static std::unique_ptr<ExecutionPlan> compile(
      const Graph& graph, torch::nn::Module& root,
      const ForeignTargets* foreign = nullptr);
  ~ExecutionPlan() override;

  // Runs the graph on positional inputs (one per placeholder; a `*args`
  // placeholder takes the rest; defaults fill in missing ones). Errors are
  // FxError naming the node that failed.
  c10::IValue run(std::vector<c10::IValue> inputs) const override;

  // The number of value slots and steps (for tests and benchmarks).
  size_t num_slots() const { return num_slots_; }
  size_t num_steps() const;

 private:
  struct Call;
  ExecutionPlan();
  void lay_out_calls();
  void run_step(const CompiledStep& step, const Call& c,
                std::vector<c10::IValue>& slots,
                std::vector<c10::IValue>& buffer,
                std::vector<c10::IValue>& inputs) const;

  // The compiled steps (compiled_steps.h), in graph order.
  std::vector<CompiledStep> steps_;
  // What run() reads for a call, packed: one Call per step (see the .cc).
  std::vector<Call> calls_;
  std::vector<int32_t> arg_slots_;  // per call parameter: a slot, or -1
  std::vector<int32_t> releases_;
  size_t num_slots_ = 0;
  size_t max_params_ = 0;
};

}  // namespace fx

#endif  // FX_CORE_COMPILE_EXECUTION_PLAN_H_
