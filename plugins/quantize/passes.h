// The passes of libfx_quantize.so, one a file (quantize_weights.cc,
// quantize_prepare.cc, quantize_calibrate.cc, quantize_convert.cc;
// quantize_lower in lower.h), for the plugin's registration (plugin.cc),
// which gives their names, options and descriptions. Each returns whether
// it changed the graph; refusals are fxp::Error.
#ifndef PLUGINS_QUANTIZE_PASSES_H_
#define PLUGINS_QUANTIZE_PASSES_H_

#include "fx/plugin_api.hpp"

namespace fx_quant {

// Weight-only (dynamic=true: dynamic) int8 quantization of Linear and
// Conv2d (quantize_weights.cc).
bool quantize_weights(fxp::Graph& g, const fxp::Options& options);

// Observers on the inputs (outputs=true: and outputs) of Linear and Conv2d
// (quantize_prepare.cc).
bool quantize_prepare(fxp::Graph& g, const fxp::Options& options);

// The observers' ranges from the host's example inputs
// (quantize_calibrate.cc).
bool quantize_calibrate(fxp::Graph& g, const fxp::Options& options);

// Observed regions -> quantize, dequantize, the op on int8 weights
// (quantize_convert.cc).
bool quantize_convert(fxp::Graph& g, const fxp::Options& options);

}  // namespace fx_quant

#endif  // PLUGINS_QUANTIZE_PASSES_H_
