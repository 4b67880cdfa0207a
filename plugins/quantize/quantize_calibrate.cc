// quantize_calibrate (libfx_quantize.so): runs every batch of the host's
// example inputs through the graph (GraphRun) and stores what each observer
// saw in its node's meta['observed'] (observers.h).
#include "fx/plugin_api.hpp"
#include "plugins/quantize/observers.h"
#include "plugins/quantize/passes.h"

namespace fx_quant {

using fxp::Graph;

bool quantize_calibrate(Graph& g, const fxp::Options&) {
  return fx_quant::calibrate(g);
}

}  // namespace fx_quant
