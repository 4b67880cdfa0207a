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
//                      also on their outputs and on residual adds.
//   quantize_calibrate runs the host's example inputs through the graph
//                      (GraphRun) and stores what each observer saw in its
//                      node's meta['observed'].
//   quantize_convert   replaces each observed region with quantize ->
//                      dequantize -> the op on dequantized int8 weights
//                      (PyTorch's reference quantized pattern): activations
//                      quint8 per tensor affine from the observed range,
//                      weights int8 per channel.
//   quantize_lower     lowers that pattern to int8 kernels (lower.h).
//
// Calibration may also be run by the host itself (forward on the prepared
// GraphModule): observers without meta['observed'] then use what this
// plugin's observers recorded in the process.
#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/plugin_util.h"
#include "plugins/quantize/float_values.h"
#include "plugins/quantize/histogram.h"
#include "plugins/quantize/lower.h"
#include "plugins/quantize/patterns.h"
#include "plugins/quantize/report.h"

namespace {

using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;
using fxp::Value;

constexpr const char* kObserve = "fx_quant.observe";

// ------------------------------------------------------------- observers

struct Range {
  double min = 0, max = 0;
  bool seen = false;
  fx_quant::Histogram histogram;  // what a histogram observer uses
};

std::mutex& ranges_mutex() {
  static std::mutex m;
  return m;
}
std::map<int64_t, Range>& ranges() {
  static std::map<int64_t, Range> r;
  return r;
}

// The values of a float tensor and their range; nullopt for another dtype
// or no elements.
struct Observed {
  std::vector<double> values;
  double lo = INFINITY, hi = -INFINITY;
};

std::optional<Observed> observe_values(const DLTensor& t) {
  if (t.dtype.code != kDLFloat || (t.dtype.bits != 32 && t.dtype.bits != 64)) {
    return std::nullopt;
  }
  Observed o;
  fx_quant::for_each_float(t, [&](double v) {
    o.values.push_back(v);
    o.lo = std::min(o.lo, v);
    o.hi = std::max(o.hi, v);
  });
  if (!(o.lo <= o.hi)) return std::nullopt;
  return o;
}

void record(Range& r, const Observed& o) {
  r.min = r.seen ? std::min(r.min, o.lo) : o.lo;
  r.max = r.seen ? std::max(r.max, o.hi) : o.hi;
  r.seen = true;
  r.histogram.add(o.values, o.lo, o.hi);
}

// fx_quant.observe(input, id): records input's min, max and histogram under
// `id` and returns input.
FxStatus* observe_kernel(const FxApi* api, const FxOpCall* call, void*,
                         DLManagedTensor** out) {
  DLManagedTensor* x = nullptr;
  int64_t id = 0;
  FxStatus* s = api->CallTensorArg(call, "input", &x);
  if (!s) s = api->CallIntArg(call, "id", &id);
  if (s) {
    if (x && x->deleter) x->deleter(x);
    return s;
  }
  if (std::optional<Observed> o = observe_values(x->dl_tensor)) {
    std::lock_guard<std::mutex> lock(ranges_mutex());
    record(ranges()[id], *o);
  }
  *out = x;  // the input itself, passed through
  return nullptr;
}

FxStatus* observe_shape(const FxApi* api, const FxOpCall* call, void*,
                        FxTensorSpec* out) {
  FxTensorMeta m;
  FxStatus* s = api->CallTensorMeta(call, "input", &m);
  if (s) return s;
  out->ndim = m.ndim;
  for (int32_t i = 0; i < m.ndim && i < FX_MAX_DIMS; ++i) {
    out->shape[i] = m.shape[i];
  }
  out->dtype = m.dtype;
  return nullptr;
}

FxStatus* register_extensions(const FxApi* api, FxRegistrar* registrar) {
  static const FxCustomOp observe = {kObserve, "input, id", observe_kernel,
                                     observe_shape, nullptr};
  return api->RegisterCustomOp(registrar, &observe);
}

// ---------------------------------------------------- quantizable sites

// A Linear or Conv2d call: module form or functional form with a get_attr
// weight.
struct Site {
  Node node;
  bool conv = false;
  std::string weight;          // attribute path of the float weight
  std::string bias;            // attribute path, or empty
  std::string module;          // call_module target, or empty
  std::vector<Arg> conv_args;  // stride, padding, dilation, groups
  std::string name;            // base for new attribute names
};

std::string flat(std::string s) {
  for (char& c : s) {
    if (c == '.') c = '_';
  }
  return s;
}

ArgView call_param(const Node& n, size_t index, const char* name) {
  if (ArgView k = n.kwarg(name)) return k;
  return index < n.num_args() ? n.arg(index) : ArgView();
}

std::optional<Site> site_of(Graph& g, Node n) {
  Site s;
  s.node = n;
  if (n.op() == FX_OP_CALL_MODULE) {
    std::string target(n.target());
    std::string type = g.module_type(target.c_str());
    if (type != "torch.nn.Linear" && type != "torch.nn.Conv2d") {
      return std::nullopt;
    }
    s.conv = type == "torch.nn.Conv2d";
    s.module = target;
    s.weight = target + ".weight";
    if (!g.has_attr(s.weight.c_str())) return std::nullopt;
    if (g.has_attr((target + ".bias").c_str())) s.bias = target + ".bias";
    s.name = flat(target);
    if (s.conv) {
      Arg config = fxp::module_config(g, target.c_str());
      ArgView mode = fxp::dict_get(config.view(), "padding_mode");
      if (mode && mode.as_string() != "zeros") return std::nullopt;
      for (const char* key : {"stride", "padding", "dilation", "groups"}) {
        ArgView v = fxp::dict_get(config.view(), key);
        if (!v) return std::nullopt;
        s.conv_args.emplace_back(v);
      }
    }
    return s;
  }
  if (n.op() != FX_OP_CALL_FUNCTION) return std::nullopt;
  std::string_view t = n.target();
  if (t == "torch.nn.functional.linear" || t == "torch._C._nn.linear") {
    s.conv = false;
  } else if (t == "torch.conv2d" || t == "torch.nn.functional.conv2d") {
    s.conv = true;
  } else {
    return std::nullopt;
  }
  ArgView w = call_param(n, 1, "weight");
  if (!w || !w.is_node() || w.node().op() != FX_OP_GET_ATTR) {
    return std::nullopt;
  }
  s.weight = std::string(w.node().target());
  ArgView b = call_param(n, 2, "bias");
  if (b && b.is_node()) {
    if (b.node().op() != FX_OP_GET_ATTR) return std::nullopt;
    s.bias = std::string(b.node().target());
  }
  s.name = flat(std::string(n.name()));
  if (s.conv) {
    const char* keys[] = {"stride", "padding", "dilation", "groups"};
    Arg defaults[] = {Arg(1), Arg(0), Arg(1), Arg(1)};
    for (size_t i = 0; i < 4; ++i) {
      ArgView v = call_param(n, 3 + i, keys[i]);
      s.conv_args.push_back(v ? Arg(v) : defaults[i]);
    }
  }
  return s;
}

std::vector<Site> sites(Graph& g) {
  std::vector<Site> out;
  for (Node n : g) {
    if (n.op() != FX_OP_CALL_MODULE && n.op() != FX_OP_CALL_FUNCTION) continue;
    if (std::optional<Site> s = site_of(g, n)) out.push_back(*s);
  }
  return out;
}

// Quantizes the float weight per output channel (axis 0, symmetric int8),
// stores the int8 weight and the scales, and records the dequantized
// weight in the graph at the insertion point. Returns nullopt when the
// weight is not float.
std::optional<Value> quantized_weight(Graph& g, const Site& s, int bits) {
  fxp::Tensor w(g.get_attr_tensor(s.weight.c_str()));
  if (w.dl().dtype.code != kDLFloat || w.ndim() < 1) return std::nullopt;
  int64_t channels = w.dl().shape[0];
  int64_t per = channels ? w.numel() / channels : 0;
  std::vector<double> values;
  values.reserve(w.numel());
  fx_quant::for_each_float(w.dl(), [&](double v) { values.push_back(v); });
  double qmax = std::pow(2.0, bits - 1) - 1;  // 127
  std::vector<int64_t> scale_shape{channels};
  for (int i = 1; i < w.ndim(); ++i) scale_shape.push_back(1);
  fxp::Tensor q = fxp::make_tensor(w.shape(), fxp::kInt8);
  fxp::Tensor scale = fxp::make_tensor(scale_shape, fxp::kFloat32);
  for (int64_t c = 0; c < channels; ++c) {
    double amax = 0;
    for (int64_t i = 0; i < per; ++i) {
      amax = std::max(amax, std::fabs(values[c * per + i]));
    }
    float sc = static_cast<float>(amax > 0 ? amax / qmax : 1.0);
    scale.mutable_data<float>()[c] = sc;
    for (int64_t i = 0; i < per; ++i) {
      double v = std::nearbyint(values[c * per + i] / sc);
      q.mutable_data<int8_t>()[c * per + i] =
          static_cast<int8_t>(std::clamp(v, -qmax, qmax));
    }
  }
  std::string q_name = fx_quant::fresh_attr_name(g, s.name + "_weight_int8");
  g.set_attr_tensor(q_name.c_str(), q.release());
  std::string s_name = fx_quant::fresh_attr_name(g, s.name + "_weight_scale");
  g.set_attr_tensor(s_name.c_str(), scale.release());
  Value wq = g.get_attr(q_name.c_str());
  Value ws = g.get_attr(s_name.c_str());
  return wq.call_method("to", {Arg::dtype("torch.float32")}) * ws;
}

// The op on `x` with the dequantized weight, replacing the site's node.
Value float_op(Graph& g, const Site& s, const Value& x, const Value& w) {
  Arg bias;
  if (!s.bias.empty()) bias = Arg(g.get_attr(s.bias.c_str()));
  if (!s.conv) {
    return g.call_function("torch.nn.functional.linear",
                           {Arg(x.node()), Arg(w.node()), bias});
  }
  std::vector<Arg> args{Arg(x.node()), Arg(w.node()), bias};
  for (const Arg& a : s.conv_args) args.push_back(a);
  return g.call_function("torch.nn.functional.conv2d", args);
}

Value input_of(const Site& s) { return call_param(s.node, 0, "input").node(); }

void replace(Graph& g, Node old, const Value& with) {
  old.replace_all_uses_with(with.node());
  g.erase_node(old);
}

// get_attr nodes the rewrite left without users (the float weights).
void erase_unused_attrs(Graph& g) {
  for (Node n : g) {
    if (n.op() == FX_OP_GET_ATTR && n.num_users() == 0) g.erase_node(n);
  }
}

// -------------------------------------------------------------- passes

bool quantize_weights(Graph& g, const fxp::Options& options) {
  bool dynamic = options.get_bool("dynamic");
  int bits = static_cast<int>(options.get_int("bits"));
  if (bits < 2 || bits > 8) {
    throw fxp::Error(FX_INVALID_ARGUMENT, "bits must be between 2 and 8");
  }
  bool changed = false;
  for (const Site& s : sites(g)) {
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

bool is_observer(Node n) {
  return n.op() == FX_OP_CALL_FUNCTION && n.target() == kObserve;
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
                                const std::string& kind) {
  size_t before = g.size();
  for (const Site& s : sites(g)) {
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
  const std::string kind = options.get_string("observer");
  if (kind != "minmax" && kind != "histogram") {
    throw fxp::Error(
        FX_INVALID_ARGUMENT,
        "observer must be minmax or histogram, not '" + kind + "'");
  }
  bool changed = false;
  if (options.get_bool("outputs")) {
    changed = observe_inputs_and_outputs(g, next_id, kind);
  } else {
    for (const Site& s : sites(g)) {
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
  std::lock_guard<std::mutex> lock(ranges_mutex());
  for (int64_t id = 0; id < next_id; ++id) ranges().erase(id);
  return changed;
}

bool is_histogram(Node obs) {
  ArgView kind = obs.meta("observer");
  return kind && kind.kind() == FX_ARG_STRING &&
         kind.as_string() == "histogram";
}

// What meta['observed'] held before (min, max and, for a histogram
// observer, its bins), merged into `r`.
void merge_meta(Node obs, Range& r) {
  ArgView old = obs.meta("observed");
  if (!old) return;
  const double lo = fxp::dict_get(old, "min").as_float();
  const double hi = fxp::dict_get(old, "max").as_float();
  r.min = std::min(r.min, lo), r.max = std::max(r.max, hi);
  if (ArgView bins = fxp::dict_get(old, "histogram")) {
    std::vector<double> counts;
    for (size_t i = 0; i < bins.size(); ++i)
      counts.push_back(bins[i].as_float());
    r.histogram.merge(fx_quant::Histogram::from(lo, hi, std::move(counts)));
  }
}

Arg observed_meta(Node obs, const Range& r) {
  fxp::Kwargs fields = {{"min", Arg(r.min)}, {"max", Arg(r.max)}};
  if (is_histogram(obs) && !r.histogram.empty()) {
    std::vector<Arg> bins;
    for (double c : r.histogram.counts()) bins.emplace_back(c);
    fields = {{"min", Arg(r.histogram.min())},
              {"max", Arg(r.histogram.max())},
              {"histogram", Arg::list(bins)}};
  }
  return Arg::dict(fields);
}

bool quantize_calibrate(Graph& g, const fxp::Options&) {
  std::vector<std::vector<fxp::Tensor>> batches = fxp::example_batches(g);
  size_t num_inputs = fx_plugins::placeholders(g).size();
  if (batches.empty() || batches[0].size() < num_inputs) {
    throw fxp::Error(FX_FAILED_PRECONDITION,
                     "quantize_calibrate needs the host's example inputs "
                     "(fx run --inputs IN.pt: one batch, or a list of "
                     "batches)");
  }
  std::map<FxNode*, Range> seen;
  for (const std::vector<fxp::Tensor>& batch : batches) {
    std::vector<const DLTensor*> inputs;
    for (size_t i = 0; i < num_inputs; ++i) inputs.push_back(&batch[i].dl());
    fxp::run_graph(g, inputs, false, [&](Node n, fxp::RuntimeValue v) {
      if (!is_observer(n) || !v.is_tensor()) return;
      fxp::Tensor t = v.to_dlpack();
      if (std::optional<Observed> o = observe_values(t.dl())) {
        record(seen[n.get()], *o);
      }
    });
  }
  for (auto& [node, range] : seen) {
    Node n(node);
    merge_meta(n, range);
    n.set_meta("observed", observed_meta(n, range));
  }
  return !seen.empty();
}

// The quint8 quantization of what an observer saw: per tensor affine over
// a range that includes 0.
fx_quant::QParams observed_qparams(Node obs) {
  double lo, hi;
  fx_quant::Histogram histogram;
  if (ArgView m = obs.meta("observed")) {
    Range r;
    r.min = r.max = fxp::dict_get(m, "min").as_float();
    merge_meta(obs, r);
    lo = r.min, hi = r.max;
    histogram = r.histogram;
  } else {
    std::lock_guard<std::mutex> lock(ranges_mutex());
    auto it = ranges().find(obs.arg(1).as_int());
    if (it == ranges().end() || !it->second.seen) {
      throw fxp::Error(FX_FAILED_PRECONDITION,
                       "observer '" + std::string(obs.name()) +
                           "' saw no data: calibrate first "
                           "(quantize_calibrate, or run the prepared "
                           "module)");
    }
    lo = it->second.min;
    hi = it->second.max;
    histogram = it->second.histogram;
  }
  if (is_histogram(obs) && !histogram.empty()) {
    std::tie(lo, hi) = histogram.best_range();
  }
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  // At least float32's epsilon, as torch.ao's observers clamp it.
  double scale = std::max((hi - lo) / 255.0, 1.1920928955078125e-07);
  int64_t zero_point = std::clamp<int64_t>(
      static_cast<int64_t>(std::nearbyint(-lo / scale)), 0, 255);
  return {scale, zero_point};
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
    if (!s) continue;
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

}  // namespace

FXP_PLUGIN_WITH_EXTENSIONS(
    "fx_quantize", "1.0", register_extensions,
    fxp::pass<quantize_weights>(
        "quantize_weights",
        "int8 weight-only (or dynamic) quantization of Linear and Conv2d, "
        "per-channel scales")
        .option("dynamic", FX_OPTION_BOOL, "false",
                "also quantize activations per tensor at run time")
        .option("bits", FX_OPTION_INT, "8", "weight bits (symmetric)")
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
