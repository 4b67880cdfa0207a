// libfx_quantize.so: post-training int8 quantization; the plugin's
// registration: its passes (one a file, passes.h), their options and
// descriptions, and the observer op.
//
//   quantize_weights   weight-only (or, with dynamic=true, dynamic)
//                      quantization of Linear and Conv2d: each weight is
//                      quantized here, from its float data, per output
//                      channel (symmetric int8); the int8 weight and the
//                      float scales become attributes and the graph
//                      dequantizes them (int8 -> float * scale) before the
//                      functional op. dynamic=true also quantizes the
//                      activation per tensor at run time
//                      (torch.quantize_per_tensor_dynamic -> dequantize).
//   quantize_prepare   inserts an observer (the custom op fx_quant.observe,
//                      registered by this plugin, which records min/max) on
//                      the input of every Linear and Conv2d; outputs=true
//                      also on their outputs and on residual adds;
//                      observer=histogram; skip= keeps named ones float.
//   quantize_calibrate runs every batch of the host's example inputs
//                      through the graph (GraphRun) and stores what each
//                      observer saw in its node's meta['observed'].
//   quantize_convert   replaces each observed region with quantize ->
//                      dequantize -> the op on dequantized int8 weights
//                      (PyTorch's reference quantized pattern): activations
//                      quint8 per tensor affine from the observed range,
//                      weights int8 per channel; report=true measures
//                      (report.h), keep_float=N keeps the N most sensitive
//                      activations float.
//   quantize_lower     lowers that pattern to int8 kernels (lower.h).
//
// Calibration may also be run by the host itself (forward on the prepared
// GraphModule): observers without meta['observed'] then use what this
// plugin's observers recorded in the process.
//
// The parts: sites.h (the Linear / Conv2d calls and their weights),
// observers.h (the observer op, calibration, the quantization chosen),
// histogram.h (the histogram observer's range), report.h (quantize_convert's
// quality report), patterns.h and lower.h (quantize_lower).
#include "fx/plugin_api.hpp"
#include "plugins/quantize/lower.h"
#include "plugins/quantize/observers.h"
#include "plugins/quantize/passes.h"

namespace {

constexpr const char* kSkipHelp =
    "Linear / Conv2d to keep in float: node names, module paths (a parent's "
    "covers its children, after fold_bn too), module types or functions";

}  // namespace

FXP_PLUGIN_WITH_EXTENSIONS(
    "fx_quantize", "1.0", fx_quant::register_observer_op,
    fxp::pass<fx_quant::quantize_weights>(
        "quantize_weights",
        "int8 weight-only (or dynamic) quantization of Linear and Conv2d, "
        "per-channel scales")
        .option("dynamic", FX_OPTION_BOOL, "false",
                "also quantize activations per tensor at run time")
        .option("bits", FX_OPTION_INT, "8", "weight bits (symmetric)")
        .option("skip", FX_OPTION_STRING_LIST, "", kSkipHelp)
        .invalidates({"tensor_meta"})
        // int8 weights move the outputs: fx plugin-check measured them within
        // 0.05 (not 0.01) on resnet18, mobilenet_v2, squeezenet1_1 and the
        // reference graphs; declared with a margin of 2. Fewer bits move
        // them further.
        .tolerance(0.1, 0.1),
    fxp::pass<fx_quant::quantize_prepare>(
        "quantize_prepare",
        "inserts min/max observers (fx_quant.observe) before Linear and "
        "Conv2d")
        .option("skip", FX_OPTION_STRING_LIST, "", kSkipHelp)
        .option("observer", FX_OPTION_STRING, "minmax",
                "minmax (the range seen) or histogram (the range of least "
                "expected quantization error over the values seen)")
        .option("outputs", FX_OPTION_BOOL, "false",
                "also observe each op's output (after the ReLU, ReLU6 or "
                "Hardtanh it feeds) and residual adds: quantize_lower then "
                "keeps activations in int8 between layers")
        .invalidates({"tensor_meta"}),
    fxp::pass<fx_quant::quantize_calibrate>(
        "quantize_calibrate",
        "runs the example inputs (every batch); stores each observer's "
        "range in its meta")
        .run_after({"quantize_prepare"}),
    fxp::pass<fx_quant::quantize_convert>(
        "quantize_convert",
        "observed regions -> quantize, dequantize, op on int8 weights")
        .option("bits", FX_OPTION_INT, "8", "weight bits (symmetric)")
        .option("report", FX_OPTION_BOOL, "false",
                "measure on the example inputs: each activation's SQNR, the "
                "output's SQNR and top-1 agreement against float (the output "
                "node's meta['quantization_report'])")
        .option("keep_float", FX_OPTION_INT, "0",
                "keep the N activations whose quantization hurts most (the "
                "lowest activation SQNR) and the ops they feed in float")
        .run_after({"quantize_prepare", "quantize_calibrate"})
        .invalidates({"tensor_meta"}),
    fxp::pass<fx_quant::quantize_lower>(
        "quantize_lower",
        "quantize_convert's reference pattern -> int8 kernels: quantized "
        "Conv2d / ConvReLU2d / Linear / LinearReLU modules and quantized "
        "adds, quint8 activations between them")
        .run_after({"quantize_convert"})
        .invalidates({"tensor_meta"})
        .tolerance(0.1, 0.1))
