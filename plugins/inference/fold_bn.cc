// fold_bn (libfx_inference.so): a BatchNorm2d (running statistics) whose
// input is a Conv2d used by nothing else becomes part of the convolution:
// one torch.conv2d with new weight and bias attributes (w * g / sqrt(v +
// eps), (b - m) * g / sqrt(v + eps) + beta), as torch.fx's
// experimental.optimization.fuse does. For graphs of modules in eval mode
// (inference): the batch statistics of training mode are not folded.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/rewrite_util.h"
#include "plugins/inference/batch_norm.h"
#include "plugins/inference/passes.h"
#include "plugins/inference/sites.h"

namespace fx_inference {
namespace {

using fx_plugins::copy_tensor_meta;
using fx_plugins::erase_unused_get_attrs;
using fx_plugins::flat;
using fxp::Arg;
using fxp::Graph;
using fxp::Node;

// The folded weight and bias of `conv` followed by the BatchNorm2d `bn`;
// nullopt when some tensor is not contiguous float32 or shapes disagree.
struct Folded {
  std::vector<int64_t> weight_shape;
  std::vector<double> weight, bias;
};

std::optional<Folded> fold(Graph& g, const ConvSite& conv,
                           const std::string& bn) {
  Folded f;
  auto w = float_values(g, conv.weight, &f.weight_shape);
  std::optional<BatchNormStatistics> s = batch_norm_statistics(g, bn);
  if (!w || !s || f.weight_shape.empty()) return std::nullopt;
  const size_t channels = static_cast<size_t>(f.weight_shape[0]);
  if (s->channels() != channels) return std::nullopt;
  std::vector<double> bias(channels, 0.0);
  if (!conv.bias.empty() && g.has_attr(conv.bias.c_str())) {
    auto v = float_values(g, conv.bias, nullptr);
    if (!v || v->size() != channels) return std::nullopt;
    bias = std::move(*v);
  }
  const size_t per = w->size() / channels;
  f.weight = std::move(*w);
  f.bias.resize(channels);
  for (size_t c = 0; c < channels; ++c) {
    const double scale = s->weight[c] / std::sqrt(s->var[c] + s->eps);
    for (size_t i = 0; i < per; ++i) f.weight[c * per + i] *= scale;
    f.bias[c] = (bias[c] - s->mean[c]) * scale + s->bias[c];
  }
  return f;
}

}  // namespace

bool fold_bn(Graph& g, const fxp::Options&) {
  bool changed = false;
  for (Node bn : g.nodes()) {
    if (!is_batch_norm(g, bn) || !bn.arg(0).is_node()) continue;
    Node conv_node = bn.arg(0).node();
    if (conv_node.num_users() != 1) continue;
    std::optional<ConvSite> conv = conv_site(g, conv_node);
    if (!conv) continue;
    std::string bn_target(bn.target());
    std::optional<Folded> f = fold(g, *conv, bn_target);
    if (!f) continue;
    const std::string base = flat(std::string(conv_node.name()));
    std::string w =
        store_float(g, base + "_folded_weight", f->weight_shape, f->weight);
    std::string b =
        store_float(g, base + "_folded_bias",
                    {static_cast<int64_t>(f->bias.size())}, f->bias);
    auto guard = g.inserting_before(bn);
    std::vector<Arg> args{Arg(conv->input), Arg(g.get_attr(w.c_str())),
                          Arg(g.get_attr(b.c_str()))};
    for (const Arg& a : conv->config) args.push_back(a);
    Node folded = g.call_function("torch.conv2d", args);
    copy_tensor_meta(bn, folded);
    bn.replace_all_uses_with(folded);
    g.erase_node(bn);
    g.erase_node(conv_node);
    changed = true;
  }
  erase_unused_get_attrs(g);
  return changed;
}

}  // namespace fx_inference
