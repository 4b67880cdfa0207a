// fx::OnednnQLinear: one quantized linear layer, as torch.ao.nn.quantized's
// Linear and torch.ao.nn.intrinsic.quantized's LinearReLU compute it on
// LibTorch's onednn engine (quantized::linear / linear_relu), bound to
// oneDNN's int8 matmul for the InferencePlan: a quint8 input of sizes
// (M, K) with one scale and zero point, qint8 weights (N, K) with one scale
// per tensor or per output feature and zero points of 0, a float bias, a
// quint8 output (M, N).
//
// LibTorch 1.13 runs the same oneDNN matmul (its scales, zero points and
// bias as int8_requantization.h sets them up) with the weights in their
// plain (K, N) layout, which oneDNN's VNNI kernel repacks on every call
// (mobilenet_v2's classifier: 136 us of a 1280 x 1000 matmul at batch 1).
// create() reorders them once into the layout oneDNN prefers (format any).
// The integer sums are exact and the requantisation is the same, so the
// results equal quantized::linear's bit for bit
// (tests/fx_core/compile:onednn_qlinear_test).
//
// run() takes a row-major quint8 or uint8 input of input_sizes() and writes
// into `out`, a row-major quint8 or uint8 tensor of output_sizes(). Uses the
// libdnnl.so.2 LibTorch links; no oneDNN type appears here. One object is
// for one thread at a time (its memory handles are re-pointed on each run).
#ifndef FX_CORE_COMPILE_ONEDNN_QLINEAR_H_
#define FX_CORE_COMPILE_ONEDNN_QLINEAR_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fx {

// A quantized linear layer's quantization parameters and activation.
struct QuantizedLinearParams {
  double input_scale = 1.0;
  int64_t input_zero_point = 0;
  double output_scale = 1.0;
  int64_t output_zero_point = 0;
  bool relu = false;  // LinearReLU
};

class OnednnQLinear {
 public:
  // The primitive for inputs of `input_sizes` (M, K); nullptr when oneDNN
  // cannot compute it as LibTorch does (a weight that is not a 2-d qint8
  // tensor with zero points of 0 and K columns, per-channel scales on
  // another axis than 0, a bias that is not a float vector of N, scales
  // that are not positive and finite, zero points outside 0..255) or has no
  // int8 kernel for it.
  static std::unique_ptr<OnednnQLinear> create(
      const at::Tensor& weight, const at::Tensor& bias,
      const QuantizedLinearParams& params, std::vector<int64_t> input_sizes);
  // The same layer with other quantization parameters, sharing the packed
  // weights when the new primitive wants their layout; nullptr as create().
  std::unique_ptr<OnednnQLinear> with_params(
      const QuantizedLinearParams& params) const;
  ~OnednnQLinear();
  OnednnQLinear(const OnednnQLinear&) = delete;
  OnednnQLinear& operator=(const OnednnQLinear&) = delete;

  const std::vector<int64_t>& input_sizes() const;
  const std::vector<int64_t>& output_sizes() const;
  const QuantizedLinearParams& params() const;
  // oneDNN's name for the kernel it chose (e.g. "brg:avx512_core_vnni").
  std::string implementation() const;
  void run(const at::Tensor& input, const at::Tensor& out);

 private:
  struct Impl;
  explicit OnednnQLinear(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fx

#endif  // FX_CORE_COMPILE_ONEDNN_QLINEAR_H_
