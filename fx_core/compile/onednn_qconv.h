// fx::OnednnQConv: one quantized 2-d convolution, as torch.ao.nn.quantized's
// Conv2d and torch.ao.nn.intrinsic.quantized's ConvReLU2d compute it on
// LibTorch's onednn engine (quantized::conv2d / conv2d_relu), bound to
// oneDNN's int8 kernels for the InferencePlan: quint8 activations (one scale
// and zero point each for the input and the output), qint8 weights with one
// scale per tensor or per output channel and zero points of 0, a float bias.
//
// create() builds the primitive for one input shape and one pair of input
// and output quantization parameters, with the weights reordered once into
// the layout oneDNN prefers (format any; on huge pages), the bias put once
// into the int32 accumulator's units, and the requantisation fused:
//
//   out[oc] = saturate_u8(round(m[oc] * (acc + b[oc] * a[oc])) + zo)
//   a[oc] = (1/si) * (1/sw[oc]),  m[oc] = (1/so) / a[oc]
//
// (acc: the int32 sum of (x - zi) * w; ReLU, or a clip, applied before + zo),
// each reciprocal and product rounded to float as LibTorch 1.13's onednn
// engine rounds them when it sets up the same oneDNN convolution: results
// equal quantized::conv2d's bit for bit
// (tests/fx_core/compile:onednn_qconv_test). Activations are NHWC
// (torch.channels_last): run() takes the input's uint8 data (a quint8 or a
// uint8 tensor; NCHW-contiguous reordered by oneDNN into a copy the object
// keeps, other strides copied through LibTorch)
// and writes into `out`, a channels_last-contiguous quint8 or uint8 tensor of
// output_sizes(). Without a fused ReLU, the optional `clamp` bounds are a
// Hardtanh (ReLU6) of the real-valued result: as rounding is monotone, that
// equals the quantized convolution followed by LibTorch's quantized hardtanh.
//
// Uses the libdnnl.so.2 LibTorch links; no oneDNN type appears here. One
// object is for one thread at a time (its memory handles are re-pointed on
// each run).
#ifndef FX_CORE_COMPILE_ONEDNN_QCONV_H_
#define FX_CORE_COMPILE_ONEDNN_QCONV_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/compile/conv_geometry.h"

namespace fx {

// A quantized convolution's arguments besides its tensors: its geometry,
// its quantization parameters and its activation.
struct QuantizedConvParams : ConvGeometry {
  double input_scale = 1.0;
  int64_t input_zero_point = 0;
  double output_scale = 1.0;
  int64_t output_zero_point = 0;
  bool relu = false;  // ConvReLU2d
  // Hardtanh(min, max) of the real-valued result (without `relu`).
  std::optional<std::pair<double, double>> clamp;
};

class OnednnQConv {
 public:
  // The primitive for inputs of `input_sizes` (N, C, H, W); nullptr when
  // oneDNN cannot compute it as LibTorch does (a weight that is not qint8
  // with zero points of 0, per-channel scales on another axis than 0, a
  // bias that is not float, scales that are not positive and finite, zero
  // points outside 0..255, channels that do not divide into groups) or has
  // no int8 kernel for it.
  static std::unique_ptr<OnednnQConv> create(const at::Tensor& weight,
                                             const at::Tensor& bias,
                                             const QuantizedConvParams& params,
                                             std::vector<int64_t> input_sizes);
  // The same convolution (weights, bias, input sizes) with other
  // parameters: other input or output qparams, a clamp. The packed weights
  // are shared, not packed again, when the new primitive wants the layout
  // they are in (oneDNN's memory descriptors compared); nullptr as create().
  std::unique_ptr<OnednnQConv> with_params(
      const QuantizedConvParams& params) const;
  ~OnednnQConv();
  OnednnQConv(const OnednnQConv&) = delete;
  OnednnQConv& operator=(const OnednnQConv&) = delete;

  const std::vector<int64_t>& input_sizes() const;
  const std::vector<int64_t>& output_sizes() const;
  const QuantizedConvParams& params() const;
  // oneDNN's name for the kernel it chose (e.g. "brg:avx512_core_vnni").
  std::string implementation() const;
  void run(const at::Tensor& input, const at::Tensor& out);

 private:
  struct Impl;
  explicit OnednnQConv(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fx

#endif  // FX_CORE_COMPILE_ONEDNN_QCONV_H_
