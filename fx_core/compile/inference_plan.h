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
//    oneDNN (onednn_conv.h): weights reordered once, residual add and
//    activation as post-ops, results channels_last (NHWC) in planned
//    buffers, inputs of another layout reordered on the way in. The
//    algorithm (direct or Winograd) is chosen by measurement at plan build
//    (conv_choice.h). A convolution whose residual is dead after it
//    (liveness over alias groups; the residual a planned buffer of the same
//    layout, not the convolution's input, not reaching the output) writes
//    its result into the residual's buffer. Since these
//    results are laid out differently from the reference kernel's, the
//    plan records the graph's layouts a second time with them bound before
//    planning the elementwise steps.
//  - fx_inference.linear nodes (the fuse_linear pass) on float32 CPU values
//    with attribute weights run on oneDNN's matmul (onednn_linear.h):
//    weights reordered once, residual add and activation (gelu included) as
//    post-ops, results contiguous as the reference's, in planned buffers.
//  - fx_inference.pointwise nodes (written by fuse_pointwise) on float32 CPU
//    values run in one TensorIterator pass (pointwise_kernel.h), as
//    direct steps do (iterator built once, planned buffers).
//  - torch.nn's MaxPool2d modules on channels_last float32 CPU values run
//    a kernel of the plan's own, AvgPool2d and AdaptiveAvgPool2d ones
//    oneDNN's pooling (pooling_steps.h), bound once the convolutions have
//    chosen their layout; ATen's numbers bit for bit (a NaN's bits aside),
//    but a global average and ATen's NCHW adaptive windows (other orders of
//    rounding), which are bound only in graphs the inference passes wrote.
//  - The torch.cat calls concatenating prefixes of one list of pieces
//    (DenseNet's blocks), read only by elementwise steps, share one planned
//    buffer: each piece is copied in once, each result is a view of it
//    (inference_program_cat.cc).
//  - In place: a direct step whose operand sits in a planned buffer of the
//    result's layout, dead after the step (its whole alias group) and read
//    by no other operand of the step through an alias, writes its result
//    into that buffer instead of taking another.
//  - Everything else runs the op registry's / module registry's kernels, as
//    ExecutionPlan does.
// Results are bitwise identical to GraphModule::forward on graphs without
// fx_inference.conv2d / linear / pointwise: the same kernels run on the same
// operands with the same output layout, or kernels computing the same bits
// (pooling, concatenation; tests/fx_core/compile, tests/python); oneDNN's
// convolutions and linears equal the reference within float32 rounding
// (tests/plugins:inference_test), fused pointwise steps within 1e-6
// relative (transcendental functions).
//
// run() checks the inputs against the planned signature (count; each
// tensor's sizes, strides, dtype and device; other values by equality). On a
// mismatch a static plan (PlanShapes::kStatic, the default) re-plans for the
// new inputs (the planning run computes the result); with grad mode enabled
// it calls GraphModule::forward, since the direct kernels record no autograd
// graph. A direct node whose operand arrives with another layout than
// planned (a registry kernel whose result layout varies) makes the rest of
// that run take the registries' kernels, and the next run re-plan.
//
// Dynamic plans (PlanShapes::kDynamic, issue 31 item 6): one plan for every
// input shape the graph allows. What it builds once: the compiled steps
// (the graph is compiled once) and oneDNN's packed weights (each weight
// reordered once per layout oneDNN asks for, shared by every shape:
// shared_weights.h; conv_choice.h's algorithm decisions are cached per
// shape for the process). What is per shape, honestly: TensorIterators
// and oneDNN primitives are specialised to sizes (oneDNN's convolutions
// have no run-time dimensions), so the first call with a new input
// signature builds a shape specialisation lazily: that call runs the graph
// through the registries to record its layouts (once more with convolutions
// bound, as build() does), then binds iterators and primitives for those
// sizes and keeps them; later calls with that signature look it up (a
// comparison of the inputs' sizes per cached shape, most recent first) and
// run at the static plan's speed. Buffers are sized per shape from the
// recorded layouts, in memory every specialisation shares (SharedBuffers,
// buffer_pool.h: the k-th buffer of every shape in one block as large as the
// largest), so memory is that of the largest shape, not the sum. At most
// kMaxSpecialisations shapes are kept (least recently used dropped). A
// dynamic plan never calls GraphModule::forward for a shape (only for grad
// mode or inputs it cannot plan, as a static plan), and never re-plans
// unless a run leaves its plan as above (stats().replans).
// Numbers: each specialisation is planned exactly as a static plan for its
// shape, so results equal the static plan's for that shape (bitwise: the
// same kernels, operands and layouts) and GraphModule::forward's as above;
// a shape's first call returns its planning run's result (the registries'
// kernels), as a static plan's build and re-plans do.
//
// Both: when the GraphModule has a ShapeEnv (a symbolic graph), build() and
// every run() check its guards first (shape_guards.h): inputs that break one
// get the guard's FxError, whatever the plan has cached.
//
// The plan holds raw pointers into the GraphModule (modules, tensors): build
// a new one after recompile() or after replacing an attribute. run() mutates
// the plan's iterators: one plan is for one thread at a time.
#ifndef FX_CORE_COMPILE_INFERENCE_PLAN_H_
#define FX_CORE_COMPILE_INFERENCE_PLAN_H_

#include <ATen/core/ivalue.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fx {

class GraphModule;
struct CompiledSteps;

// Whether a plan is for its example inputs' shapes or for every shape.
enum class PlanShapes { kStatic, kDynamic };

class InferencePlan {
 public:
  // Shape specialisations a dynamic plan keeps.
  static constexpr size_t kMaxSpecialisations = 64;

  // Plans `gm` for inputs like `example_inputs` (kDynamic: and any other
  // shapes). Throws FxError when the graph cannot run on them (the error
  // GraphModule::forward would give) or they break a guard.
  static std::unique_ptr<InferencePlan> build(
      GraphModule& gm, std::vector<c10::IValue> example_inputs,
      PlanShapes shapes = PlanShapes::kStatic);
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

  // What the plan does (for tests, benchmarks and tuning). Per-step counts
  // and buffers are the most recently run shape's.
  struct Stats {
    size_t steps = 0;           // graph nodes
    size_t direct_steps = 0;    // bound to ATen CPU kernels or oneDNN
    size_t onednn_steps = 0;    // of which on oneDNN (conv2d, linear, matmul,
                                // window_attention)
    size_t winograd_steps = 0;  // of which on oneDNN's Winograd kernel
    size_t panel_steps = 0;     // linears on PanelLinear (panel_linear.h)
    // 1x1 convolutions computing the depthwise convolution after them too
    // (oneDNN's fused kernel; the depthwise call forwards the result)
    size_t depthwise_fusions = 0;
    // Convolutions and linears whose two kernels were tried inside the
    // network at plan build (network_trial.h), in how many groups (the
    // steps of one op and shapes, decided together), and how many steps the
    // network moved off the kernel timed fastest alone.
    size_t trial_steps = 0;
    size_t trial_groups = 0;
    size_t trial_overturned = 0;
    size_t residuals_in_place = 0;  // convolutions summing into the residual
    size_t pointwise_steps = 0;     // fx_inference.pointwise fused in one pass
    size_t in_place_steps = 0;  // direct results written over a dead operand
    // torch.cat steps whose result is a view of a buffer shared with the
    // wider cats of the same pieces (each piece copied once)
    size_t cats_in_place = 0;
    size_t fallback_steps = 0;  // call_function/method/module via registries
    size_t buffers = 0;         // preallocated result buffers
    size_t buffer_bytes = 0;
    size_t fresh_outputs = 0;     // direct results allocated per run (outputs)
    size_t replans = 0;           // re-plans (see run() above)
    size_t forward_calls = 0;     // runs delegated to GraphModule::forward
    size_t direct_fallbacks = 0;  // direct nodes run by their registry kernel
    // Both kinds of plan (issue 31 item 6).
    bool dynamic = false;
    size_t plan_builds = 0;  // 1 + replans
    // Distinct input signatures planned: 1 for a static plan; a dynamic
    // plan's lazily built specialisations (live: those kept now).
    size_t shape_specialisations = 0;
    size_t live_specialisations = 0;
    size_t shared_buffer_bytes = 0;  // dynamic: every shape's buffers
    size_t weight_packs = 0;         // dynamic: packed weight copies
  };
  Stats stats() const;
  // The names of the nodes bound directly, in graph order.
  std::vector<std::string> direct_nodes() const;

 private:
  struct Program;
  struct Shared;
  InferencePlan(GraphModule& gm, PlanShapes shapes);
  std::unique_ptr<Program> plan_for(std::vector<c10::IValue> inputs,
                                    c10::IValue* out);
  Program* find_program(const std::vector<c10::IValue>& in);
  std::optional<c10::IValue> plan_new(std::vector<c10::IValue> in, bool replan);

  GraphModule& gm_;
  std::unique_ptr<CompiledSteps> compiled_;
  std::unique_ptr<Shared> shared_;  // dynamic plans only
  // The planned programs, most recently run first (a static plan has one).
  std::vector<std::unique_ptr<Program>> programs_;
  size_t specialisations_ = 0;
  size_t replans_ = 0;
  size_t forward_calls_ = 0;
  size_t direct_fallbacks_ = 0;  // of replaced programs
};

}  // namespace fx

#endif  // FX_CORE_COMPILE_INFERENCE_PLAN_H_
