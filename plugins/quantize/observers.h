// The observers quantize_prepare inserts: the custom op fx_quant.observe
// (registered by the plugin; it passes its input through and records, per
// observer id, the range and a histogram of what it saw: calibration by
// the host running the prepared module), the calibration by the pass
// (meta['observed'] on each observer node: min, max and, for a histogram
// observer, its bins), and the quantization chosen from either.
#ifndef PLUGINS_QUANTIZE_OBSERVERS_H_
#define PLUGINS_QUANTIZE_OBSERVERS_H_

#include <cstdint>

#include "fx/plugin_api.hpp"
#include "plugins/quantize/patterns.h"

namespace fx_quant {

inline constexpr const char* kObserve = "fx_quant.observe";

// Registers fx_quant.observe(input, id) (register_extensions).
FxStatus* register_observer_op(const FxApi* api, FxRegistrar* registrar);

bool is_observer(fxp::Node n);

// Forgets what the process's observers recorded under ids below `end`
// (quantize_prepare starts them afresh).
void forget_observations(int64_t end);

// Runs every batch of the host's example inputs through the graph and
// stores what each observer saw in its meta['observed'] (merged with what
// was there). Returns whether any observer saw data.
bool calibrate(fxp::Graph& g);

// The quint8 quantization of what an observer saw (its meta, else what the
// process recorded): per tensor affine over the range min/max or the
// histogram gives, containing 0. Error naming the observer when it saw
// nothing.
QParams observed_qparams(fxp::Node obs);

}  // namespace fx_quant

#endif  // PLUGINS_QUANTIZE_OBSERVERS_H_
