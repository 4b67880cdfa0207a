// How LibTorch 1.13's onednn engine sets up oneDNN for an int8 convolution
// or linear (quantized::conv2d, quantized::linear): the scales and the bias
// in the int32 accumulator's units, each reciprocal and product rounded to
// float as LibTorch rounds them. OnednnQConv and OnednnQLinear build their
// primitives from these, so their results equal LibTorch's bit for bit:
//
//   out[oc] = saturate_u8(round(m[oc] * (acc + b[oc] * a[oc])) + zo)
//   a[oc] = (1/si) * (1/sw[oc]),  m[oc] = (1/so) / a[oc]
//
// (acc: the int32 sum of (x - zi) * w; si, so: the input's and output's
// scales; sw: the weight's, one or one per output channel; a ReLU or clip
// post-op on the scaled value; the output zero point zo added where the
// oneDNN kernel adds it, which for some kernels is before the rounding:
// LibTorch runs the same kernels with the same attributes).
#ifndef FX_CORE_COMPILE_INT8_REQUANTIZATION_H_
#define FX_CORE_COMPILE_INT8_REQUANTIZATION_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace fx {

// The weight's scales (one, or one per output channel) when `w` is a qint8
// tensor of `dims` dimensions oneDNN can take: zero points of 0, per-tensor
// or per-channel along axis 0, every scale positive and finite; else empty.
std::vector<double> int8_weight_scales(const at::Tensor& w, int64_t dims);

// Whether a quint8 activation's scale and zero point are ones oneDNN takes.
bool usable_u8_qparams(double scale, int64_t zero_point);

// a[oc] (bias_scales) and m[oc] (output_scales) above.
struct Int8Scales {
  std::vector<float> bias_scales, output_scales;
};
Int8Scales int8_scales(double input_scale, double output_scale,
                       const std::vector<double>& weight_scales);

// The float bias times a[oc] (not rounded: oneDNN adds a float bias to the
// accumulator converted to float), as a new contiguous float tensor.
at::Tensor bias_in_accumulator_units(const at::Tensor& bias,
                                     const std::vector<float>& bias_scales);

}  // namespace fx

#endif  // FX_CORE_COMPILE_INT8_REQUANTIZATION_H_
