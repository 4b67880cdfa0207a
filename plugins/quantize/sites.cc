// The quantize passes' sites (sites.h).
#include "plugins/quantize/sites.h"

#include <algorithm>
#include <cmath>

#include "plugins/common/rewrite_util.h"
#include "plugins/quantize/float_values.h"
#include "plugins/quantize/patterns.h"

namespace fx_quant {

using fx_plugins::call_param;
using fx_plugins::flat;
using fx_plugins::fresh_attr_name;
using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;
using fxp::Value;

namespace {

// Whether a `skip` entry names the site: its node's name; its module's
// path or a parent's ("layer4" for layer4.0.conv1), or its type
// ("torch.nn.Linear"); its function ("torch.nn.functional.linear"); or, for
// a function on a get_attr weight, the module path the weight's name
// starts with, flattened (fold_bn's layer4_0_conv1_folded_weight is
// layer4's and layer4.0.conv1's).
bool named_by(Graph& g, const Site& s, const std::string& entry) {
  const std::string target(s.node.target());
  if (entry == s.node.name() || entry == target) return true;
  if (!s.module.empty()) {
    return s.module.compare(0, entry.size() + 1, entry + ".") == 0 ||
           g.module_type(s.module.c_str()) == entry;
  }
  const std::string prefix = flat(entry) + "_";
  return flat(s.weight).compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

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

bool is_skipped(Node n) {
  ArgView q = n.meta("quantize");
  return q && q.kind() == FX_ARG_BOOL && !q.as_bool();
}

std::vector<Site> sites(Graph& g, const std::vector<std::string>& skip) {
  std::vector<Site> out;
  for (Node n : g) {
    if (n.op() != FX_OP_CALL_MODULE && n.op() != FX_OP_CALL_FUNCTION) continue;
    std::optional<Site> s = site_of(g, n);
    if (!s || is_skipped(n)) continue;
    bool named = std::any_of(skip.begin(), skip.end(),
                             [&](const auto& e) { return named_by(g, *s, e); });
    if (named) {
      n.set_meta("quantize", Arg(false));
    } else {
      out.push_back(*s);
    }
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
  for_each_float(w.dl(), [&](double v) { values.push_back(v); });
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
  std::string q_name = fresh_attr_name(g, s.name + "_weight_int8");
  g.set_attr_tensor(q_name.c_str(), q.release());
  std::string s_name = fresh_attr_name(g, s.name + "_weight_scale");
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

}  // namespace fx_quant
