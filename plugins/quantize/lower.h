// quantize_lower: PyTorch's reference quantized pattern, as quantize_convert
// writes it, lowered to int8 kernels. Each
//
//   dequantize(X) -> F.conv2d / F.linear (weight: int8 attribute .to(float)
//   * per-channel scale) [-> ReLU] -> torch.quantize_per_tensor(s, z, quint8)
//
// with X a quint8 tensor becomes one call of a quantized module,
// torch.ao.nn.quantized's Conv2d / Linear or torch.ao.nn.intrinsic's
// ConvReLU2d / LinearReLU (the classes PyTorch's convert_fx makes, run on
// LibTorch's oneDNN int8 kernels, weights prepacked once), whose weight is
// the int8 weight as a qint8 per-channel tensor and whose output is
// quantized with (s, z); and each
//
//   dequantize(A) + dequantize(B) [-> ReLU] -> quantize_per_tensor(s, z)
//
// becomes torch.ops.quantized.add(A, B, s, z) (add_relu with the ReLU; s
// and z as the quantize node gives them, literals or attributes).
// PyTorch's own reference form (convert_to_reference_fx) lowers the same
// way: dequantize(X) -> a reference Conv2d / Linear module, alone or in a
// ConvReLU2d / LinearReLU [-> ReLU] -> quantize_per_tensor becomes the
// quantized module convert_fx builds, under the module's name, its weight
// quantized with the reference module's weight_qparams
// (reference_modules.h): the graph and numbers are convert_fx's.
// Pooling, ReLU6, Hardtanh, flatten and an eval-mode Dropout between them
// run on the quint8 tensor (keeping its quantization, as convert_fx does;
// the Dropout becomes the quantized one).
// A chain of such ops then passes quint8 tensors from one to the next; what
// does not match (an op without an observed output) stays as it was, in
// float between dequantize and quantize. And quantize_weights{dynamic=true}'s
//
//   F.linear(dequantize(quantize_per_tensor_dynamic(x)), int8 weight, bias)
//
// becomes a call of torch.ao.nn.quantized.dynamic's Linear on x
// (quantized::linear_dynamic: int8 GEMM, float in and out).
//
// The output node's meta['int8_lowering'] lists what runs int8 ("int8")
// and the ops left computing on dequantized values ("float").
#ifndef PLUGINS_QUANTIZE_LOWER_H_
#define PLUGINS_QUANTIZE_LOWER_H_

#include "fx/plugin_api.hpp"

namespace fx_quant {

// Returns whether anything was lowered. Needs the graph's owning module
// (the quantized modules are added to it).
bool quantize_lower(fxp::Graph& g, const fxp::Options& options);

}  // namespace fx_quant

#endif  // PLUGINS_QUANTIZE_LOWER_H_
