// quantize_convert (libfx_quantize.so): replaces each observed region with
// quantize -> dequantize -> the op on dequantized int8 weights (PyTorch's
// reference quantized pattern): activations quint8 per tensor affine from
// the observed range, weights int8 per channel. report=true measures the
// result against float (report.h); keep_float=N keeps the N most sensitive
// activations, and the ops they feed, in float.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/plugin_util.h"
#include "plugins/common/rewrite_util.h"
#include "plugins/quantize/observers.h"
#include "plugins/quantize/passes.h"
#include "plugins/quantize/report.h"
#include "plugins/quantize/sites.h"

namespace fx_quant {
namespace {

using fxp::Arg;
using fxp::Graph;
using fxp::Node;
using fxp::Value;

// obs -> quantize_per_tensor -> dequantize, and the ops it feeds on int8
// weights. Returns the quantize node.
Node convert_observer(Graph& g, Node obs, fx_quant::QParams q, int bits) {
  Node x = obs.arg(0).node();
  std::vector<Node> users = obs.users();
  Node quantized;
  {
    auto guard = g.inserting_before(obs);
    quantized = g.call_function(
        "torch.quantize_per_tensor",
        {Arg(x), Arg(q.scale), Arg(q.zero_point), Arg::dtype("torch.quint8")});
    Value dq = Value(quantized).call_method("dequantize");
    obs.replace_all_uses_with(dq.node());
  }
  g.erase_node(obs);
  for (Node u : users) {
    std::optional<Site> s = site_of(g, u);
    if (!s || is_skipped(u)) continue;
    auto guard = g.inserting_before(u);
    std::optional<Value> w = quantized_weight(g, *s, bits);
    if (!w) continue;
    replace(g, u, float_op(g, *s, input_of(*s), *w));
  }
  return quantized;
}

// The `n` observers whose activations quantization hurts most (lowest
// activation SQNR), kept in float.
std::set<FxNode*> most_sensitive(const std::map<FxNode*, double>& sqnr,
                                 int64_t n) {
  std::vector<std::pair<double, FxNode*>> order;
  for (const auto& [node, db] : sqnr) order.emplace_back(db, node);
  std::sort(order.begin(), order.end());
  std::set<FxNode*> out;
  for (int64_t i = 0; i < n && i < static_cast<int64_t>(order.size()); ++i) {
    out.insert(order[i].second);
  }
  return out;
}

Arg number_or_none(std::optional<double> v) {
  if (!v) return Arg();
  // JSON has no infinity: an exact result reports 999 dB.
  return Arg(std::isfinite(*v) ? *v : 999.0);
}

}  // namespace

bool quantize_convert(Graph& g, const fxp::Options& options) {
  const int bits = static_cast<int>(options.get_int("bits"));
  const bool report = options.get_bool("report");
  const int64_t keep_float = options.get_int("keep_float");
  std::vector<Node> observers = g.find_nodes(FX_OP_CALL_FUNCTION, kObserve);
  std::map<FxNode*, fx_quant::QParams> qparams;
  for (Node obs : observers) qparams[obs.get()] = observed_qparams(obs);
  std::vector<fxp::Tensor> inputs;
  fx_quant::FloatRun before;
  if (report || keep_float > 0) {
    inputs = fxp::example_inputs(g);
    if (inputs.size() < fx_plugins::placeholders(g).size()) {
      throw fxp::Error(FX_FAILED_PRECONDITION,
                       "quantize_convert's report and keep_float measure on "
                       "the host's example inputs (fx run --inputs IN.pt)");
    }
    before = fx_quant::measure_float_run(g, inputs, qparams);
  }
  std::set<FxNode*> kept = most_sensitive(before.activation_sqnr, keep_float);
  std::vector<Arg> layers;
  for (Node obs : observers) {
    const std::string value(obs.arg(0).node().name());
    auto measured = before.activation_sqnr.find(obs.get());
    std::optional<double> db;
    if (measured != before.activation_sqnr.end()) db = measured->second;
    const bool keep = kept.count(obs.get()) > 0;
    Arg quantize;  // None when kept in float
    if (keep) {
      obs.replace_all_uses_with(obs.arg(0).node());
      g.erase_node(obs);
    } else {
      Node q = convert_observer(g, obs, qparams[obs.get()], bits);
      if (db) q.set_meta("activation_sqnr", number_or_none(db));
      quantize = Arg(std::string(q.name()));
    }
    layers.push_back(Arg::dict({{"value", Arg(value)},
                                {"quantize", quantize},
                                {"activation_sqnr", number_or_none(db)},
                                {"kept_float", Arg(keep)}}));
  }
  fx_plugins::erase_unused_get_attrs(g);
  if (report) {
    fx_quant::OutputValues after = fx_quant::run_output(g, inputs);
    g.output_node().set_meta(
        "quantization_report",
        Arg::dict({{"sqnr", number_or_none(fx_quant::sqnr(before.output.values,
                                                          after.values))},
                   {"top1_agreement", number_or_none(fx_quant::top1_agreement(
                                          before.output, after))},
                   {"layers", Arg::list(layers)}}));
  }
  return !observers.empty();
}

}  // namespace fx_quant
