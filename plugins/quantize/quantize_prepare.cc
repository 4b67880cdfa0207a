// quantize_prepare (libfx_quantize.so): inserts an observer (the custom op
// fx_quant.observe, registered by this plugin, which records min/max) on the
// input of every Linear and Conv2d; outputs=true also on their outputs
// (after the ReLU, ReLU6 or Hardtanh each feeds) and on residual adds;
// observer=histogram for the histogram observer's range; skip= keeps the
// named sites in float.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/quantize/observers.h"
#include "plugins/quantize/passes.h"
#include "plugins/quantize/patterns.h"
#include "plugins/quantize/sites.h"

namespace fx_quant {
namespace {

using fxp::Arg;
using fxp::Graph;
using fxp::Node;
using fxp::Value;

// An observer of `value` for every one of its users: the one it has, or a
// new one right after it (after the last placeholder for a placeholder).
Node observe_everywhere(Graph& g, Node value, int64_t& next_id,
                        const std::string& kind) {
  if (is_observer(value)) return value;
  for (Node u : value.users()) {
    if (is_observer(u)) return u;
  }
  Node anchor = value;
  while (anchor.op() == FX_OP_PLACEHOLDER && anchor.next() &&
         anchor.next().op() == FX_OP_PLACEHOLDER) {
    anchor = anchor.next();
  }
  Node obs;
  {
    auto guard = g.inserting_after(anchor);
    obs = g.call_function(kObserve, {Arg(value), Arg(next_id++)});
  }
  if (kind != "minmax") obs.set_meta("observer", Arg(kind));
  for (Node u : value.users()) {
    if (u != obs) u.replace_input_with(value, obs);
  }
  return obs;
}

// The value an op's output is observed at: the ReLU it alone feeds, if any
// (PyTorch fuses the two), or the ReLU6 / Hardtanh it alone feeds, else the
// op itself. PyTorch observes before a ReLU6 (the clamp shares its input's
// quantization), so its activations after ReLU6 keep the zero point of the
// unclamped values; observed after it, they get a zero point of 0 and the
// whole 0..255 range for [0, 6], and the convolutions reading them run
// oneDNN's faster kernels for inputs without a zero point (quantize_lower
// leaves the clamp on the quantized result).
Node output_to_observe(Graph& g, Node op) {
  std::vector<Node> users = op.users();
  if (users.size() == 1 && (fx_quant::is_relu(g, users[0]) ||
                            fx_quant::is_clamp_of(g, users[0], op))) {
    return users[0];
  }
  return op;
}

// outputs=true: every site's input and output (after its ReLU), and each
// add of two observed values (a residual add), as PyTorch's static
// quantization observes them; one observer per value, shared by its users.
bool observe_inputs_and_outputs(Graph& g, int64_t& next_id,
                                const std::string& kind,
                                const std::vector<std::string>& skip) {
  size_t before = g.size();
  for (const Site& s : sites(g, skip)) {
    observe_everywhere(g, input_of(s).node(), next_id, kind);
    observe_everywhere(g, output_to_observe(g, s.node), next_id, kind);
  }
  for (Node n : g) {
    if (!fx_quant::is_add(n)) continue;
    if (is_observer(n.arg(0).node()) && is_observer(n.arg(1).node())) {
      observe_everywhere(g, output_to_observe(g, n), next_id, kind);
    }
  }
  return g.size() != before;
}

}  // namespace

bool quantize_prepare(Graph& g, const fxp::Options& options) {
  int64_t next_id = 0;
  // Ids continue after observers already in the graph.
  for (Node n : g.find_nodes(FX_OP_CALL_FUNCTION, kObserve)) {
    next_id = std::max(next_id, n.arg(1).as_int() + 1);
  }
  const std::vector<std::string> skip = options.get_list("skip");
  const std::string kind = options.get_string("observer");
  if (kind != "minmax" && kind != "histogram") {
    throw fxp::Error(
        FX_INVALID_ARGUMENT,
        "observer must be minmax or histogram, not '" + kind + "'");
  }
  bool changed = false;
  if (options.get_bool("outputs")) {
    changed = observe_inputs_and_outputs(g, next_id, kind, skip);
  } else {
    for (const Site& s : sites(g, skip)) {
      Value x = input_of(s);
      if (is_observer(x.node())) continue;
      Node n = s.node;
      auto guard = g.inserting_before(n);
      Node obs = g.call_function(kObserve, {Arg(x.node()), Arg(next_id++)});
      if (kind != "minmax") obs.set_meta("observer", Arg(kind));
      n.replace_input_with(x.node(), obs);
      changed = true;
    }
  }
  fx_quant::forget_observations(next_id);
  return changed;
}

}  // namespace fx_quant
