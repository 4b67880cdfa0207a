// fx::OnednnLinear: one fx_inference.linear (a linear layer with bias,
// residual add and activation; fx_core/runtime/ops/inference_ops.cc) bound to
// oneDNN for float32 CPU inference, as the InferencePlan runs it.
//
// create() builds oneDNN's matmul primitive for one input shape (the leading
// dimensions flattened into rows: [..., K] x [K, N]), with the weights
// reordered once into the layout oneDNN prefers for that shape (format any;
// in memory on huge pages, huge_pages.h)
// and the tail as post-ops (binary add of the residual, then the eltwise
// activation: gelu is gelu_erf, gelu_tanh gelu_tanh). run() takes a float32
// input of the planned sizes (copied to contiguous first when it is not)
// and writes `out`, a contiguous float32 tensor of output_sizes() ([..., N]),
// the layout the reference kernel gives. Results equal the reference within
// float32 rounding (oneDNN's accumulation order and its gelu).
//
// Uses the libdnnl.so.2 LibTorch links; no oneDNN type appears here. One
// object is for one thread at a time (its memory handles are re-pointed on
// each run).
#ifndef FX_CORE_COMPILE_ONEDNN_LINEAR_H_
#define FX_CORE_COMPILE_ONEDNN_LINEAR_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "fx_core/compile/fused_linear.h"

namespace fx {

class OnednnLinear : public FusedLinearKernel {
 public:
  // The primitive for inputs of `input_sizes` ([..., K], at least 1-d);
  // nullptr when oneDNN cannot compute the op as the reference does (not
  // float32, a weight that is not [N, K], a bias that is not [N], an
  // unknown activation, an empty input).
  static std::unique_ptr<OnednnLinear> create(const at::Tensor& weight,
                                              const at::Tensor& bias,
                                              const FusedLinearParams& params,
                                              std::vector<int64_t> input_sizes);
  ~OnednnLinear() override;
  OnednnLinear(const OnednnLinear&) = delete;
  OnednnLinear& operator=(const OnednnLinear&) = delete;

  void run(const at::Tensor& input, const at::Tensor* residual,
           const at::Tensor& out) override;
  void evict_weights() const override;

 private:
  struct Impl;
  OnednnLinear(std::unique_ptr<Impl> impl, FusedLinearShape shape);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fx

#endif  // FX_CORE_COMPILE_ONEDNN_LINEAR_H_
