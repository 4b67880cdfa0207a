// fx::OnednnStep: a graph node the InferencePlan runs on oneDNN:
// fx_inference.conv2d (onednn_conv.h, the algorithm chosen by
// conv_choice.h), fx_inference.linear (onednn_linear.h, or the plan's own
// AVX-512 product, panel_linear.h, or the BLAS split over LibTorch's
// threads, blas_linear.h, as linear_choice.h picks) and
// fx_inference.matmul (onednn_matmul.h) and fx_inference.window_attention
// (window_attention.h), all written by the plugins/inference passes.
//
// bind_onednn_step() looks at one call as planned (its target, what each
// parameter is: a constant, an attribute tensor, or a value computed at run
// time with its recorded layout) and returns the bound step, or nullptr when
// the node is not one of these or oneDNN cannot compute it as the reference
// kernel does (then the plan runs the registry's kernel). A bound step reads
// the slots inputs() names and writes a float32 tensor of output_sizes():
// contiguous as the reference's for linear and matmul, channels_last (NHWC)
// for convolutions, whose layout is oneDNN's choice (onednn_sets_layout: the
// plan binds those first and records the graph's layouts again with them
// running). fits() says whether run-time operands still have the planned
// sizes (else the plan leaves its direct path for that run, as for its other
// direct kernels). A step with a residual() adds that value to its result;
// when sums_in_place(), the plan may hand run() the residual's own buffer as
// `out` (a convolution's sum post-op accumulates there, no copy).
#ifndef FX_CORE_COMPILE_ONEDNN_STEPS_H_
#define FX_CORE_COMPILE_ONEDNN_STEPS_H_

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fx {

// One parameter of a call as the planner sees it.
struct PlannedParam {
  enum class Kind { kOther, kConstant, kAttribute, kValue };
  Kind kind = Kind::kOther;
  c10::IValue constant;                   // kConstant
  const at::Tensor* attribute = nullptr;  // kAttribute: a get_attr tensor
  int32_t slot = -1;                      // kValue
  // kValue: its recorded layout; float_cpu when a plain float32 CPU tensor.
  bool float_cpu = false;
  std::vector<int64_t> sizes, strides;
};

// What a planned parameter is, for the binders: an int or float constant
// (not a bool) and its value; None; a float32 CPU value; laid out
// row-major (the strides of size-1 dimensions aside).
bool is_number(const PlannedParam& p);
double number(const PlannedParam& p);
bool is_none(const PlannedParam& p);
bool float_value(const PlannedParam& p);
bool row_major(const PlannedParam& p);

class OnednnStep {
 public:
  virtual ~OnednnStep() = default;
  // The slots run() reads, in the order it takes them (the input first).
  const std::vector<int32_t>& inputs() const { return inputs_; }
  // The slot added to the result (-1: none), and whether `out` may be its
  // buffer.
  int32_t residual() const { return residual_; }
  bool sums_in_place() const { return sums_in_place_; }
  virtual const std::vector<int64_t>& output_sizes() const = 0;
  // A new result tensor of the layout run() writes (contiguous unless
  // overridden).
  virtual at::Tensor empty_output() const;
  virtual bool fits(const std::vector<const at::Tensor*>& operands) const = 0;
  virtual void run(const std::vector<const at::Tensor*>& operands,
                   const at::Tensor& out) = 0;
  // Whether it runs oneDNN's Winograd kernel (for the plan's statistics).
  virtual bool winograd() const { return false; }
  // What runs it: "onednn", or for a linear "blas" (BlasLinear) or "panel"
  // (PanelLinear), as the plan's profile and statistics name it.
  virtual const char* engine() const { return "onednn"; }
  // The kernels the plan tries inside the network before keeping one
  // (inference_program_trial.cc): how many the step holds (1, or 2 for a
  // convolution or linear with a ConvTrial or LinearTrial: kernel 0 the
  // one timed fastest alone, kernel 1 the other), which one run() uses, and
  // keeping the i-th for good (the other is dropped; the kept one is
  // rebuilt with the SharedWeights in scope). Steps of one trial_group()
  // (the same op, shapes and fusions: ConvTrial::group, LinearTrial::group)
  // are decided together.
  virtual int kernels() const { return 1; }
  virtual void use_kernel(int i) { (void)i; }
  virtual void keep_kernel(int i) { (void)i; }
  virtual const void* trial_group() const { return nullptr; }

 protected:
  std::vector<int32_t> inputs_;
  int32_t residual_ = -1;
  bool sums_in_place_ = false;
};

// Whether oneDNN's result for `target` has a layout of its own rather than
// the reference kernel's.
bool onednn_sets_layout(const std::string& target);

// `target`'s call with `params` whose result was recorded as `out` (a
// kValue parameter describing the result).
std::unique_ptr<OnednnStep> bind_onednn_step(
    const std::string& target, const std::vector<PlannedParam>& params,
    const PlannedParam& out);

// Two fx_inference.conv2d calls as one step: `first`, a 1x1 convolution,
// and `second`, a depthwise 3x3 one (padding 1, stride 1 or 2) reading
// first's result, whose own result was recorded as `out`; neither with a
// residual. The step reads first's input and writes second's result
// (conv_choice.h, choose_depthwise_fusion: oneDNN's fused kernel, where it
// has one and it pays). nullptr otherwise.
std::unique_ptr<OnednnStep> bind_depthwise_fusion(
    const std::vector<PlannedParam>& first,
    const std::vector<PlannedParam>& second, const PlannedParam& out);

}  // namespace fx

#endif  // FX_CORE_COMPILE_ONEDNN_STEPS_H_
