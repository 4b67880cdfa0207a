#include "plugins/inference/sites.h"

#include <cstddef>
#include <string_view>
#include <utility>

#include "plugins/common/rewrite_util.h"

namespace fx_inference {
namespace {

using fx_plugins::call_param;
using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

// Padding given as numbers (not 'same' / 'valid').
bool numeric(const ArgView& v) {
  if (v.kind() == FX_ARG_INT) return true;
  if (v.size() == 0) return false;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].kind() != FX_ARG_INT) return false;
  }
  return true;
}

// The input and weight of a functional call: a node, and a get_attr node's
// target; nullopt when they are not.
std::optional<std::pair<Node, std::string>> input_and_weight(const Node& n) {
  ArgView x = call_param(n, 0, "input");
  ArgView w = call_param(n, 1, "weight");
  if (!x || !x.is_node() || !w || !w.is_node() ||
      w.node().op() != FX_OP_GET_ATTR) {
    return std::nullopt;
  }
  return std::pair{x.node(), std::string(w.node().target())};
}

// A functional call's bias (argument 2): its attribute path, "" when it is
// absent or None, nullopt when it is something else.
std::optional<std::string> bias_attr(const Node& n) {
  ArgView b = call_param(n, 2, "bias");
  if (!b || b.is_none()) return std::string();
  if (!b.is_node() || b.node().op() != FX_OP_GET_ATTR) return std::nullopt;
  return std::string(b.node().target());
}

std::optional<ConvSite> module_conv(Graph& g, const Node& n) {
  std::string target(n.target());
  if (g.module_type(target.c_str()) != "torch.nn.Conv2d") return std::nullopt;
  if (n.num_args() != 1 || n.num_kwargs() != 0 || !n.arg(0).is_node()) {
    return std::nullopt;
  }
  ConvSite s{n, n.arg(0).node(), target + ".weight", "", {}};
  if (!g.has_attr(s.weight.c_str())) return std::nullopt;
  if (g.has_attr((target + ".bias").c_str())) s.bias = target + ".bias";
  Arg config = fxp::module_config(g, target.c_str());
  ArgView mode = fxp::dict_get(config.view(), "padding_mode");
  if (!mode || mode.as_string() != "zeros") return std::nullopt;
  for (const char* key : {"stride", "padding", "dilation", "groups"}) {
    ArgView v = fxp::dict_get(config.view(), key);
    if (!v || !numeric(v)) return std::nullopt;
    s.config.emplace_back(v);
  }
  return s;
}

std::optional<ConvSite> function_conv(const Node& n) {
  std::string_view t = n.target();
  if (t != "torch.conv2d" && t != "torch.nn.functional.conv2d") {
    return std::nullopt;
  }
  auto xw = input_and_weight(n);
  if (!xw) return std::nullopt;
  std::optional<std::string> bias = bias_attr(n);
  if (!bias) return std::nullopt;
  ConvSite s{n, xw->first, xw->second, *bias, {}};
  const char* keys[] = {"stride", "padding", "dilation", "groups"};
  Arg defaults[] = {Arg(1), Arg(0), Arg(1), Arg(1)};
  for (size_t i = 0; i < 4; ++i) {
    ArgView v = call_param(n, 3 + i, keys[i]);
    if (v && !numeric(v)) return std::nullopt;
    s.config.push_back(v ? Arg(v) : defaults[i]);
  }
  return s;
}

std::optional<LinearSite> module_linear(Graph& g, const Node& n) {
  std::string target(n.target());
  if (g.module_type(target.c_str()) != "torch.nn.Linear") return std::nullopt;
  if (n.num_args() != 1 || n.num_kwargs() != 0 || !n.arg(0).is_node()) {
    return std::nullopt;
  }
  LinearSite s{n, n.arg(0).node(), target + ".weight", ""};
  if (!g.has_attr(s.weight.c_str())) return std::nullopt;
  if (g.has_attr((target + ".bias").c_str())) s.bias = target + ".bias";
  return s;
}

std::optional<LinearSite> function_linear(const Node& n) {
  std::string_view t = n.target();
  if (t != "torch._C._nn.linear" && t != "torch.nn.functional.linear") {
    return std::nullopt;
  }
  if (n.num_args() + n.num_kwargs() > 3) return std::nullopt;
  auto xw = input_and_weight(n);
  if (!xw) return std::nullopt;
  std::optional<std::string> bias = bias_attr(n);
  if (!bias) return std::nullopt;
  return LinearSite{n, xw->first, xw->second, *bias};
}

}  // namespace

std::optional<ConvSite> conv_site(Graph& g, const Node& n) {
  if (n.op() == FX_OP_CALL_MODULE) return module_conv(g, n);
  if (n.op() == FX_OP_CALL_FUNCTION) return function_conv(n);
  return std::nullopt;
}

std::optional<LinearSite> linear_site(Graph& g, const Node& n) {
  if (n.op() == FX_OP_CALL_MODULE) return module_linear(g, n);
  if (n.op() == FX_OP_CALL_FUNCTION) return function_linear(n);
  return std::nullopt;
}

}  // namespace fx_inference
