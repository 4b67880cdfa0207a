// fx::OnednnConv: one fx_inference.conv2d (a 2-d convolution with bias,
// residual add and activation; fx_core/runtime/ops/inference_ops.cc) bound to
// oneDNN for float32 CPU inference, as the InferencePlan runs it.
//
// create() builds the oneDNN primitive for one input shape, with the
// weights reordered once into the layout oneDNN prefers for it (format
// any) and the tail as post-ops (binary add of the residual, then the
// eltwise activation). Activations are NHWC (torch.channels_last): run()
// takes any strided float32 input of the planned sizes (others are copied
// to channels_last first) and writes `out`, a channels_last-contiguous
// float32 tensor of output_sizes(). Results equal the reference kernel
// within float32 rounding (oneDNN's accumulation order).
//
// Uses the libdnnl.so.2 LibTorch links; no oneDNN type appears here. One
// object is for one thread at a time (its memory handles are re-pointed on
// each run).
#ifndef FX_CORE_RUNTIME_PLAN_ONEDNN_CONV_H_
#define FX_CORE_RUNTIME_PLAN_ONEDNN_CONV_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fx {

// The arguments of fx_inference.conv2d besides its tensors.
struct FusedConvParams {
  std::vector<int64_t> stride, padding, dilation;  // two each
  int64_t groups = 1;
  bool has_residual = false;
  std::string activation = "none";
  double min_val = 0.0, max_val = 0.0;  // hardtanh's bounds
};

class OnednnConv {
 public:
  // The primitive for inputs of `input_sizes` (N, C, H, W); nullptr when
  // oneDNN cannot compute the op as the reference does (not float32, not
  // 4-d, an unknown activation, channels that do not divide into groups).
  static std::unique_ptr<OnednnConv> create(const at::Tensor& weight,
                                            const at::Tensor& bias,
                                            const FusedConvParams& params,
                                            std::vector<int64_t> input_sizes);
  ~OnednnConv();
  OnednnConv(const OnednnConv&) = delete;
  OnednnConv& operator=(const OnednnConv&) = delete;

  const std::vector<int64_t>& input_sizes() const;
  const std::vector<int64_t>& output_sizes() const;
  // `residual` is required when the params have one (output_sizes()).
  void run(const at::Tensor& input, const at::Tensor* residual,
           const at::Tensor& out);

 private:
  struct Impl;
  explicit OnednnConv(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fx

#endif  // FX_CORE_RUNTIME_PLAN_ONEDNN_CONV_H_
