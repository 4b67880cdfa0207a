// PyTorch's reference quantized modules, as convert_to_reference_fx leaves
// them in a model (torch 1.13: torch.ao.nn.quantized.reference's Conv2d and
// Linear, alone or as part 0 of torch.ao.nn.intrinsic's ConvReLU2d /
// LinearReLU), read for quantize_lower: the float module whose weight is
// quantized and dequantized with its weight_qparams before the float op,
// turned into the parts of the quantized module convert_fx builds in its
// place (torch.ao.nn.quantized's Conv2d / Linear, torch.ao.nn.intrinsic.
// quantized's ConvReLU2d / LinearReLU): the same constructor arguments, the
// weight quantized to qint8 exactly as torch.quantize_per_channel /
// quantize_per_tensor quantize it, the float bias.
#ifndef PLUGINS_QUANTIZE_REFERENCE_MODULES_H_
#define PLUGINS_QUANTIZE_REFERENCE_MODULES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "fx/plugin_api.hpp"

namespace fx_quant {

// The reference module a call_module runs.
struct ReferenceModule {
  std::string path;         // the weighted module: "conv1" or "conv1.0"
  bool conv = false;        // a Conv2d, else a Linear
  bool fused_relu = false;  // called through ConvReLU2d / LinearReLU
};

// The reference module `target` runs (a ReLU after it in a fused module
// included), or nullopt when `target` is something else.
std::optional<ReferenceModule> reference_module(const fxp::Graph& g,
                                                const std::string& target);

// What the quantized module is built from.
struct QuantizedParts {
  fxp::Arg config;          // its constructor arguments
  fxp::Tensor values;       // int8, the weight's shape
  fxp::Tensor scales;       // float64, one per channel (or one)
  fxp::Tensor zero_points;  // int64, as many
  int64_t axis = -1;        // -1: per tensor
  fxp::Tensor bias;         // float, or empty
};

// The parts of `m`'s quantized form, `relu` fused into it, or nullopt when
// its weight_qparams are not ones the int8 kernels take (qint8, per tensor
// or per channel along the output channels). Read before the module is
// replaced.
std::optional<QuantizedParts> quantized_parts(const fxp::Graph& g,
                                              const ReferenceModule& m,
                                              bool relu);

}  // namespace fx_quant

#endif  // PLUGINS_QUANTIZE_REFERENCE_MODULES_H_
