// The quality of a static quantization, measured by quantize_convert on
// the host's example inputs (its options report=true and keep_float=N):
//  - per observed activation, its SQNR against itself quantized with the
//    observer's scale and zero point (the error that quantization alone
//    adds there: the layers' sensitivity, from one float run);
//  - end to end, the SQNR of the converted graph's output against the
//    float graph's, and, for an output of shape (N, classes), how often the
//    two agree on the top class.
// It goes into the graph as meta: each quantize node's
// meta['activation_sqnr'] and the output node's
// meta['quantization_report'] = {"sqnr": dB, "top1_agreement": fraction
// or None, "layers": [{"value": the observed node's name, "quantize": the
// quantize node's name or None when kept float, "activation_sqnr": dB,
// "kept_float": bool}, ...]} (names as they are when converting; an exact
// result reports 999 dB).
#ifndef PLUGINS_QUANTIZE_REPORT_H_
#define PLUGINS_QUANTIZE_REPORT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/quantize/patterns.h"

namespace fx_quant {

// A graph output's first tensor, as float values and its shape.
struct OutputValues {
  std::vector<double> values;
  std::vector<int64_t> shape;
};

// One float run of the prepared graph: every observer's activation SQNR
// (dB; +inf for an exact one) and the output.
struct FloatRun {
  std::map<FxNode*, double> activation_sqnr;
  OutputValues output;
};

FloatRun measure_float_run(fxp::Graph& g,
                           const std::vector<fxp::Tensor>& inputs,
                           const std::map<FxNode*, QParams>& qparams);

// The graph's output on `inputs`.
OutputValues run_output(fxp::Graph& g, const std::vector<fxp::Tensor>& inputs);

// 10 log10(signal power / noise power); +inf when they are equal.
double sqnr(const std::vector<double>& reference,
            const std::vector<double>& value);

// The fraction of rows whose largest element is at the same index; nullopt
// unless both are (N, classes) with N >= 1.
std::optional<double> top1_agreement(const OutputValues& reference,
                                     const OutputValues& value);

}  // namespace fx_quant

#endif  // PLUGINS_QUANTIZE_REPORT_H_
