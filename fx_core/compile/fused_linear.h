// fx::FusedLinearKernel: what the InferencePlan's kernels for one
// fx_inference.linear (fx_core/runtime/ops/inference_ops.cc: a linear layer
// with bias, residual add and activation) have in common: OnednnLinear
// (onednn_linear.h), PanelLinear (panel_linear.h) and BlasLinear
// (blas_linear.h), one of which linear_choice.h picks for a shape.
//
// A kernel is built for one input shape ([..., K], the leading dimensions
// flattened into rows). run() takes a float32 input of input_sizes()
// (copied to contiguous first when it is not) and writes `out`, a
// contiguous float32 tensor of output_sizes() ([..., N]), the layout the
// reference kernel gives; `residual` (output_sizes()) is required when the
// params have one. Results equal the reference within float32 rounding.
// One object is for one thread at a time.
#ifndef FX_CORE_COMPILE_FUSED_LINEAR_H_
#define FX_CORE_COMPILE_FUSED_LINEAR_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fx {

// The arguments of fx_inference.linear besides its tensors.
struct FusedLinearParams {
  bool has_residual = false;
  std::string activation = "none";
  double min_val = 0.0, max_val = 0.0;  // hardtanh's bounds
};

// Whether a fused linear's tensors are ones the kernels take: a float32
// [N, K] CPU weight, no bias or a float32 [N] one, an input of
// `input_sizes` [..., K] with no empty dimension.
bool fused_linear_supported(const at::Tensor& weight, const at::Tensor& bias,
                            const std::vector<int64_t>& input_sizes);

// Whether `activation` is one of fx_inference.linear's: none, relu,
// hardtanh, hardswish, silu, sigmoid, hardsigmoid, gelu, gelu_tanh.
bool known_linear_activation(const std::string& activation);

// Columns [from, to) of `out`, a kernel's contiguous [..., n] result,
// through the params' activation, in place, by ATen's kernels ("none"
// leaves them): for a kernel whose parts each own a range of columns.
void activate_columns(const at::Tensor& out, int64_t from, int64_t to,
                      const FusedLinearParams& params);

// The sizes a kernel is built for: input [..., k], output [..., n], the
// leading dimensions flattened into `rows`.
struct FusedLinearShape {
  FusedLinearShape(std::vector<int64_t> input_sizes, int64_t n);
  std::vector<int64_t> input_sizes, output_sizes;
  int64_t rows = 1, k = 0, n = 0;
};

class FusedLinearKernel {
 public:
  virtual ~FusedLinearKernel() = default;
  const std::vector<int64_t>& input_sizes() const { return shape_.input_sizes; }
  const std::vector<int64_t>& output_sizes() const {
    return shape_.output_sizes;
  }
  virtual void run(const at::Tensor& input, const at::Tensor* residual,
                   const at::Tensor& out) = 0;
  // Flushes the weights as run() reads them out of the caches
  // (cache_flush.h), for timing a run as inside a network.
  virtual void evict_weights() const = 0;

 protected:
  explicit FusedLinearKernel(FusedLinearShape shape)
      : shape_(std::move(shape)) {}
  const FusedLinearShape& shape() const { return shape_; }

 private:
  FusedLinearShape shape_;
};

}  // namespace fx

#endif  // FX_CORE_COMPILE_FUSED_LINEAR_H_
