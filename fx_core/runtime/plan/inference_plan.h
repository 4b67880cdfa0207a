// fx::InferencePlan: a GraphModule planned for inference on inputs of known
// shapes, dtypes and devices (issue 8, item 2).
//
// build() compiles the graph with the step compiler ExecutionPlan uses
// (compiled_steps.h: the same kernels, bindings, slots and releases, and the
// same compile errors), runs it once on example inputs and records every
// value's tensor metadata. Then:
//  - Elementwise CPU ops (add, sub, mul, true div with tensors or numbers;
//    relu, clamp with number bounds, sigmoid, tanh, neg; as operator.*,
//    torch.*, torch.nn.functional.relu or Tensor methods) whose tensor
//    operands share the result's dtype are bound directly to ATen's CPU
//    kernels: a TensorIterator is built once per node, as the structured
//    `at::cpu::*_out` kernel would build it, and each run only points it at
//    the current operands and calls the kernel's DispatchStub (no dispatcher,
//    no TensorIterator set-up, no allocation).
//  - Their results go into buffers allocated ahead: liveness over the graph,
//    a buffer reused once every value that may alias it is dead (any other
//    node's result is assumed to alias its tensor arguments: views, in-place
//    ops). Values that reach the graph's output get a fresh tensor each run,
//    so a result the caller holds is never overwritten.
//  - fx_inference.conv2d nodes (written by the fold_bn / fuse_conv passes,
//    plugins/inference) on float32 CPU values with attribute weights run on
//    oneDNN (plan/onednn_conv.h): weights reordered once, residual add and
//    activation as post-ops, results channels_last (NHWC) in planned
//    buffers, inputs of another layout reordered on the way in. The
//    algorithm (direct or Winograd) is chosen by measurement at plan build
//    (plan/conv_choice.h). A convolution whose residual is dead after it
//    (liveness over alias groups; the residual a planned buffer of the same
//    layout, not the convolution's input, not reaching the output) writes
//    its result into the residual's buffer. Since these
//    results are laid out differently from the reference kernel's, the
//    plan records the graph's layouts a second time with them bound before
//    planning the elementwise steps.
//  - fx_inference.linear nodes (the fuse_linear pass) on float32 CPU values
//    with attribute weights run on oneDNN's matmul (plan/onednn_linear.h):
//    weights reordered once, residual add and activation (gelu included) as
//    post-ops, results contiguous as the reference's, in planned buffers.
//  - fx_inference.pointwise nodes (written by fuse_pointwise) on float32 CPU
//    values run in one TensorIterator pass (plan/pointwise_kernel.h), as
//    direct steps do (iterator built once, planned buffers).
//  - In place: a direct step whose operand sits in a planned buffer of the
//    result's layout, dead after the step (its whole alias group) and read
//    by no other operand of the step through an alias, writes its result
//    into that buffer instead of taking another.
//  - Everything else runs the op registry's / module registry's kernels, as
//    ExecutionPlan does.
// Results are bitwise identical to GraphModule::forward on graphs without
// fx_inference.conv2d / linear / pointwise: the same kernels run on the same
// operands with the same output layout (tests/fx_core/runtime/plan); oneDNN's
// convolutions and linears equal the reference within float32 rounding
// (tests/plugins:inference_test), fused pointwise steps within 1e-6
// relative (transcendental functions).
//
// run() checks the inputs against the planned signature (count; each
// tensor's sizes, strides, dtype and device; other values by equality). On a
// mismatch it re-plans for the new inputs (the planning run computes the
// result); with grad mode enabled it calls GraphModule::forward, since the
// direct kernels record no autograd graph. A direct node whose operand
// arrives with another layout than planned (a registry kernel whose result
// layout varies) makes the rest of that run take the registries' kernels, and
// the next run re-plan.
//
// The plan holds raw pointers into the GraphModule (modules, tensors): build
// a new one after recompile() or after replacing an attribute. run() mutates
// the plan's iterators: one plan is for one thread at a time.
#ifndef FX_CORE_RUNTIME_PLAN_INFERENCE_PLAN_H_
#define FX_CORE_RUNTIME_PLAN_INFERENCE_PLAN_H_

#include <ATen/core/ivalue.h>

#include <memory>
#include <string>
#include <vector>

namespace fx {

class GraphModule;

class InferencePlan {
 public:
  // Plans `gm` for inputs like `example_inputs`. Throws FxError when the
  // graph cannot run on them (the error GraphModule::forward would give).
  static std::unique_ptr<InferencePlan> build(
      GraphModule& gm, std::vector<c10::IValue> example_inputs);
  ~InferencePlan();
  InferencePlan(const InferencePlan&) = delete;
  InferencePlan& operator=(const InferencePlan&) = delete;

  // Runs the graph (see above). Errors are FxError naming the node.
  c10::IValue run(std::vector<c10::IValue> inputs);
  template <typename... Inputs>
  c10::IValue operator()(Inputs&&... inputs) {
    return run(
        std::vector<c10::IValue>{c10::IValue(std::forward<Inputs>(inputs))...});
  }

  // What the plan does (for tests, benchmarks and tuning).
  struct Stats {
    size_t steps = 0;           // graph nodes
    size_t direct_steps = 0;    // bound to ATen CPU kernels or oneDNN
    size_t onednn_steps = 0;    // of which on oneDNN (conv2d, linear, matmul)
    size_t winograd_steps = 0;  // of which on oneDNN's Winograd kernel
    size_t residuals_in_place = 0;  // convolutions summing into the residual
    size_t pointwise_steps = 0;     // fx_inference.pointwise fused in one pass
    size_t in_place_steps = 0;  // direct results written over a dead operand
    size_t fallback_steps = 0;  // call_function/method/module via registries
    size_t buffers = 0;         // preallocated result buffers
    size_t buffer_bytes = 0;
    size_t fresh_outputs = 0;     // direct results allocated per run (outputs)
    size_t replans = 0;           // re-plans after an input signature change
    size_t forward_calls = 0;     // runs delegated to GraphModule::forward
    size_t direct_fallbacks = 0;  // direct nodes run by their registry kernel
  };
  Stats stats() const;
  // The names of the nodes bound directly, in graph order.
  std::vector<std::string> direct_nodes() const;

 private:
  struct Program;
  explicit InferencePlan(GraphModule& gm);
  std::unique_ptr<Program> plan_for(std::vector<c10::IValue> inputs,
                                    c10::IValue* out);

  GraphModule& gm_;
  std::unique_ptr<Program> program_;
  size_t replans_ = 0;
  size_t forward_calls_ = 0;
  size_t direct_fallbacks_ = 0;  // of replaced programs
};

}  // namespace fx

#endif  // FX_CORE_RUNTIME_PLAN_INFERENCE_PLAN_H_
