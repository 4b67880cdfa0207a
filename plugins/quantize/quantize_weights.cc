// quantize_weights (libfx_quantize.so): weight-only (or, with
// dynamic=true, dynamic) quantization of Linear and Conv2d. Each weight is
// quantized here, from its float data, per output channel (symmetric int8,
// or `bits`); the int8 weight and the float scales become attributes and
// the graph dequantizes them (int8 -> float * scale) before the functional
// op. dynamic=true also quantizes the activation per tensor at run time
// (torch.quantize_per_tensor_dynamic -> dequantize).
#include <optional>

#include "fx/plugin_api.hpp"
#include "plugins/common/rewrite_util.h"
#include "plugins/quantize/passes.h"
#include "plugins/quantize/sites.h"

namespace fx_quant {

using fxp::Arg;
using fxp::Graph;
using fxp::Value;

bool quantize_weights(Graph& g, const fxp::Options& options) {
  bool dynamic = options.get_bool("dynamic");
  int bits = static_cast<int>(options.get_int("bits"));
  if (bits < 2 || bits > 8) {
    throw fxp::Error(FX_INVALID_ARGUMENT, "bits must be between 2 and 8");
  }
  bool changed = false;
  for (const Site& s : sites(g, options.get_list("skip"))) {
    auto guard = g.inserting_before(s.node);
    std::optional<Value> w = quantized_weight(g, s, bits);
    if (!w) continue;
    Value x = input_of(s);
    if (dynamic) {
      x = g.call_function(
          "torch.quantize_per_tensor_dynamic",
          {Arg(x.node()), Arg::dtype("torch.quint8"), Arg(false)});
      x = x.call_method("dequantize");
    }
    replace(g, s.node, float_op(g, s, x, *w));
    changed = true;
  }
  fx_plugins::erase_unused_get_attrs(g);
  return changed;
}

}  // namespace fx_quant
