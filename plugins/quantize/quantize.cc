// libfx_quantize.so: post-training int8 quantization.
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
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/plugin_util.h"
#include "plugins/quantize/lower.h"
#include "plugins/quantize/observers.h"
#include "plugins/quantize/patterns.h"
#include "plugins/quantize/report.h"
#include "plugins/quantize/sites.h"

namespace {

using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;
using fxp::Value;

using fx_quant::erase_unused_attrs;
using fx_quant::float_op;
using fx_quant::input_of;
using fx_quant::is_observer;
using fx_quant::is_skipped;
using fx_quant::kObserve;
using fx_quant::observed_qparams;
using fx_quant::quantized_weight;
using fx_quant::replace;
using fx_quant::Site;
using fx_quant::site_of;
using fx_quant::sites;

// -------------------------------------------------------------- passes

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
  erase_unused_attrs(g);
  return changed;
}

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
// (PyTorch fuses the two), else the op itself.
Node output_to_observe(Graph& g, Node op) {
  std::vector<Node> users = op.users();
  if (users.size() == 1 && fx_quant::is_relu(g, users[0])) return users[0];
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

bool quantize_calibrate(Graph& g, const fxp::Options&) {
  return fx_quant::calibrate(g);
}

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
  erase_unused_attrs(g);
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

constexpr const char* kSkipHelp =
    "Linear / Conv2d to keep in float: node names, module paths (a parent's "
    "covers its children, after fold_bn too), module types or functions";

}  // namespace

FXP_PLUGIN_WITH_EXTENSIONS(
    "fx_quantize", "1.0", fx_quant::register_observer_op,
    fxp::pass<quantize_weights>(
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
    fxp::pass<quantize_prepare>(
        "quantize_prepare",
        "inserts min/max observers (fx_quant.observe) before Linear and "
        "Conv2d")
        .option("skip", FX_OPTION_STRING_LIST, "", kSkipHelp)
        .option("observer", FX_OPTION_STRING, "minmax",
                "minmax (the range seen) or histogram (the range of least "
                "expected quantization error over the values seen)")
        .option("outputs", FX_OPTION_BOOL, "false",
                "also observe each op's output (after the ReLU it feeds) "
                "and residual adds, as PyTorch does: quantize_lower then "
                "keeps activations in int8 between layers")
        .invalidates({"tensor_meta"}),
    fxp::pass<quantize_calibrate>(
        "quantize_calibrate",
        "runs the example inputs (every batch); stores each observer's "
        "range in its meta")
        .run_after({"quantize_prepare"}),
    fxp::pass<quantize_convert>(
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
