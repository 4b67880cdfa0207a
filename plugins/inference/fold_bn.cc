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
#include "plugins/inference/passes.h"
#include "plugins/inference/sites.h"

namespace fx_inference {
namespace {

using fx_plugins::copy_tensor_meta;
using fx_plugins::erase_unused_get_attrs;
using fx_plugins::flat;
using fx_plugins::fresh_attr_name;
using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

// A contiguous float32 attribute's values, or nullopt.
std::optional<std::vector<double>> float_values(const Graph& g,
                                                const std::string& name,
                                                std::vector<int64_t>* shape) {
  fxp::Tensor t(g.get_attr_tensor(name.c_str()));
  const DLDataType dt = t.dl().dtype;
  if (dt.code != kDLFloat || dt.bits != 32 || dt.lanes != 1 ||
      !t.is_contiguous()) {
    return std::nullopt;
  }
  if (shape != nullptr) *shape = t.shape();
  std::vector<double> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.float_at(i);
  return v;
}

std::string store_float(Graph& g, const std::string& base,
                        const std::vector<int64_t>& shape,
                        const std::vector<double>& values) {
  fxp::Tensor t = fxp::make_tensor(shape, fxp::kFloat32);
  float* data = t.mutable_data<float>();
  for (size_t i = 0; i < values.size(); ++i) {
    data[i] = static_cast<float>(values[i]);
  }
  std::string name = fresh_attr_name(g, base);
  g.set_attr_tensor(name.c_str(), t.release());
  return name;
}

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
  auto mean = float_values(g, bn + ".running_mean", nullptr);
  auto var = float_values(g, bn + ".running_var", nullptr);
  if (!w || !mean || !var || f.weight_shape.empty()) return std::nullopt;
  const size_t channels = static_cast<size_t>(f.weight_shape[0]);
  if (mean->size() != channels || var->size() != channels) return std::nullopt;
  std::vector<double> gamma(channels, 1.0), beta(channels, 0.0),
      bias(channels, 0.0);
  for (auto [name, into] :
       {std::pair{bn + ".weight", &gamma}, std::pair{bn + ".bias", &beta},
        std::pair{conv.bias, &bias}}) {
    if (name.empty() || !g.has_attr(name.c_str())) continue;
    auto v = float_values(g, name, nullptr);
    if (!v || v->size() != channels) return std::nullopt;
    *into = *v;
  }
  Arg config = fxp::module_config(g, bn.c_str());
  ArgView eps_arg = fxp::dict_get(config.view(), "eps");
  const double eps = eps_arg ? eps_arg.as_float() : 1e-5;
  const size_t per = w->size() / channels;
  f.weight = *w;
  f.bias.resize(channels);
  for (size_t c = 0; c < channels; ++c) {
    const double scale = gamma[c] / std::sqrt((*var)[c] + eps);
    for (size_t i = 0; i < per; ++i) f.weight[c * per + i] *= scale;
    f.bias[c] = (bias[c] - (*mean)[c]) * scale + beta[c];
  }
  return f;
}

// `bn` when it is a BatchNorm2d in eval mode with running statistics called
// on `x` alone.
bool is_batch_norm(Graph& g, const Node& bn) {
  if (bn.op() != FX_OP_CALL_MODULE || bn.num_args() != 1 ||
      bn.num_kwargs() != 0) {
    return false;
  }
  std::string target(bn.target());
  // Training mode normalises by the batch's statistics: nothing to fold
  // (unknown, on an older host: folded, as before).
  if (g.module_training(target.c_str()) == 1) return false;
  return g.module_type(target.c_str()) == "torch.nn.BatchNorm2d" &&
         g.has_attr((target + ".running_mean").c_str()) &&
         g.has_attr((target + ".running_var").c_str());
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
