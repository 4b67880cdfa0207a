// fx::GemvLinear: one fx_inference.linear whose input is a single row (a
// classifier head at batch 1: [1, K] or [K]) as the InferencePlan runs it,
// on BLAS's matrix-vector product (at::addmv: OpenBLAS's sgemv) with the
// residual add and the activation applied in place on the result.
//
// Why not oneDNN: its matmul has no matrix-vector kernel in oneDNN 2.6, and
// on one row it streams the weights at a fraction of the bandwidth sgemv
// reaches. Measured on this machine at 1 thread, resnet50's head ([1, 2048]
// x [2048, 1000]): oneDNN's matmul 0.75-0.82 ms, at::linear (OpenBLAS sgemm)
// 0.38 ms, at::addmv 0.14 ms.
//
// create() returns nullptr unless the input has one row and the weight is a
// float32 [N, K] matrix (bias [N] or undefined) and the activation is one
// fx_inference.linear names; run() takes a float32 input of input_sizes()
// (any strides) and writes `out`, a contiguous float32 tensor of
// output_sizes(). Results equal the reference (at::linear, then add, then
// the activation) within float32 rounding (sgemv's accumulation order).
// Holds a copy of the weight (on huge pages, huge_pages.h) and the bias.
#ifndef FX_CORE_RUNTIME_PLAN_GEMV_LINEAR_H_
#define FX_CORE_RUNTIME_PLAN_GEMV_LINEAR_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fx_core/runtime/plan/onednn_linear.h"

namespace fx {

class GemvLinear {
 public:
  static std::unique_ptr<GemvLinear> create(const at::Tensor& weight,
                                            const at::Tensor& bias,
                                            const FusedLinearParams& params,
                                            std::vector<int64_t> input_sizes);

  const std::vector<int64_t>& input_sizes() const { return input_sizes_; }
  const std::vector<int64_t>& output_sizes() const { return output_sizes_; }
  // `residual` (output_sizes()) is required when the params have one.
  void run(const at::Tensor& input, const at::Tensor* residual,
           const at::Tensor& out);

 private:
  GemvLinear() = default;
  void activate(at::Tensor& y) const;

  at::Tensor weight_, bias_;
  FusedLinearParams params_;
  std::vector<int64_t> input_sizes_, output_sizes_;
};

}  // namespace fx

#endif  // FX_CORE_RUNTIME_PLAN_GEMV_LINEAR_H_
