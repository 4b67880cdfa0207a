// fuse (libfx_optimization.so): torch 1.13's
// torch.fx.experimental.optimization.fuse(model). For the patterns (Conv1d,
// BatchNorm1d), (Conv2d, BatchNorm2d) and (Conv3d, BatchNorm3d), in that
// order, every BatchNorm call_module whose first argument is a call_module
// of the pattern's convolution (exact module types) used by nothing else,
// and whose module tracks running statistics, is folded into the
// convolution as torch.nn.utils.fusion.fuse_conv_bn_eval folds it:
//   weight * (gamma * rsqrt(var + eps)),
//   (bias - mean) * rsqrt(var + eps) * gamma + beta,
// in the weights' own dtype and in torch's order of operations, so the
// numbers are torch's. The BatchNorm node's users then read the
// convolution and the node goes; the convolution module keeps its name (a
// convolution without bias is rebuilt with one). Like torch's fuse (which
// asserts it), modules in training mode are refused: run it on an
// eval-mode graph.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/plugin_util.h"
#include "plugins/optimization/module_types.h"
#include "plugins/optimization/passes.h"

namespace fx_optimization {
namespace {

using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

struct FusePattern {
  const char* conv;
  const char* batch_norm;
};

constexpr FusePattern kFusePatterns[] = {
    {"torch.nn.Conv1d", "torch.nn.BatchNorm1d"},
    {"torch.nn.Conv2d", "torch.nn.BatchNorm2d"},
    {"torch.nn.Conv3d", "torch.nn.BatchNorm3d"},
};

[[noreturn]] void refuse(const std::string& what) {
  fx_plugins::refuse_in("fuse", FX_FAILED_PRECONDITION, what);
}

// torch's matches_module_pattern: `bn` calls a module of the pattern's
// BatchNorm type on a call_module of its convolution type.
bool matches(ModuleTypes& types, const FusePattern& p, const Node& bn) {
  if (bn.num_args() == 0 || !bn.arg(0).is_node()) return false;
  return types.called(bn) == p.batch_norm &&
         types.called(bn.arg(0).node()) == p.conv;
}

// Whether BatchNorm `bn`, built from `config`, uses running statistics.
bool tracks_running_stats(const Graph& g, const std::string& bn,
                          const Arg& config) {
  ArgView track = fxp::dict_get(config.view(), "track_running_stats");
  if (track && !track.as_bool()) return false;
  return g.has_attr((bn + ".running_mean").c_str()) &&
         g.has_attr((bn + ".running_var").c_str());
}

// Attribute `name`'s values, `t`, as a contiguous tensor of T's dtype;
// `shape` gets its sizes. Refused when it is of another dtype or not
// contiguous.
template <typename T>
std::vector<T> values_of(const fxp::Tensor& t, const std::string& name,
                         std::vector<int64_t>* shape = nullptr) {
  const DLDataType dt = t.dl().dtype;
  if (dt.code != kDLFloat || dt.bits != sizeof(T) * 8 || dt.lanes != 1 ||
      !t.is_contiguous()) {
    refuse("'" + name + "' is not a contiguous tensor of the convolution " +
           "weight's dtype (float32 or float64)");
  }
  if (shape != nullptr) *shape = t.shape();
  const T* data = t.data<T>();
  return std::vector<T>(data, data + t.numel());
}

// Per-channel values of `name`, or `fill` for each channel when the module
// has no such attribute (no conv bias; an affine-less BatchNorm). `present`:
// the caller knows it has it.
template <typename T>
std::vector<T> channel_values(const Graph& g, const std::string& name,
                              size_t channels, T fill, bool present = false) {
  if (!present && !g.has_attr(name.c_str())) {
    return std::vector<T>(channels, fill);
  }
  std::vector<T> v =
      values_of<T>(fxp::Tensor(g.get_attr_tensor(name.c_str())), name);
  if (v.size() != channels) {
    refuse("'" + name + "' has " + std::to_string(v.size()) +
           " values; the convolution has " + std::to_string(channels) +
           " output channels");
  }
  return v;
}

template <typename T>
fxp::Tensor tensor_of(const std::vector<int64_t>& shape,
                      const std::vector<T>& values) {
  fxp::Tensor t =
      fxp::make_tensor(shape, sizeof(T) == 4 ? fxp::kFloat32 : fxp::kFloat64);
  T* data = t.mutable_data<T>();
  for (size_t i = 0; i < values.size(); ++i) data[i] = values[i];
  return t;
}

// A convolution whose module has no bias parameter gets one: the module is
// rebuilt from its config with bias=True (the host keeps its mode).
void give_bias(Graph& g, const std::string& conv, const std::string& type) {
  Arg config = fxp::module_config(g, conv.c_str());
  std::vector<std::pair<std::string, Arg>> items;
  for (size_t i = 0; i < config.view().size(); ++i) {
    std::string key = config.view().key(i);
    if (key != "bias") items.emplace_back(key, Arg(config.view()[i]));
  }
  items.emplace_back("bias", Arg(true));
  fxp::add_module(g, conv.c_str(), type.c_str(), Arg::dict(items));
}

// What a fold reads of the BatchNorm and writes to the convolution.
struct FoldSite {
  std::string conv;  // the convolution's target
  std::string bn;    // the BatchNorm's target
  std::string conv_type;
  Arg bn_config;  // the BatchNorm's constructor arguments
};

// fuse_conv_bn_weights (torch/nn/utils/fusion.py) in T's arithmetic, then
// the results set as the convolution's weight and bias; `weight` is the
// convolution's.
template <typename T>
void fold_into_conv(Graph& g, const FoldSite& site, const fxp::Tensor& weight) {
  const std::string& conv = site.conv;
  const std::string& bn = site.bn;
  std::vector<int64_t> shape;
  std::vector<T> w = values_of<T>(weight, conv + ".weight", &shape);
  const size_t channels = shape.empty() ? 0 : static_cast<size_t>(shape[0]);
  if (channels == 0) refuse("'" + conv + ".weight' has no output channels");
  // tracks_running_stats found both.
  std::vector<T> mean =
      channel_values<T>(g, bn + ".running_mean", channels, 0, true);
  std::vector<T> var =
      channel_values<T>(g, bn + ".running_var", channels, 0, true);
  std::vector<T> gamma = channel_values<T>(g, bn + ".weight", channels, 1);
  std::vector<T> beta = channel_values<T>(g, bn + ".bias", channels, 0);
  std::vector<T> b = channel_values<T>(g, conv + ".bias", channels, 0);
  ArgView eps_arg = fxp::dict_get(site.bn_config.view(), "eps");
  const T eps = static_cast<T>(eps_arg ? eps_arg.as_float() : 1e-5);
  const size_t per_channel = w.size() / channels;
  for (size_t c = 0; c < channels; ++c) {
    const T var_rsqrt = T(1) / std::sqrt(var[c] + eps);
    const T scale = gamma[c] * var_rsqrt;
    for (size_t i = 0; i < per_channel; ++i) w[c * per_channel + i] *= scale;
    const T centred = (b[c] - mean[c]) * var_rsqrt;
    b[c] = centred * gamma[c] + beta[c];
  }
  if (!g.has_attr((conv + ".bias").c_str())) {
    give_bias(g, conv, site.conv_type);
  }
  g.set_attr_tensor((conv + ".weight").c_str(), tensor_of(shape, w).release());
  g.set_attr_tensor((conv + ".bias").c_str(),
                    tensor_of({static_cast<int64_t>(channels)}, b).release());
}

void fold(Graph& g, const FoldSite& site) {
  if (g.module_training(site.conv.c_str()) == 1 ||
      g.module_training(site.bn.c_str()) == 1) {
    refuse("'" + site.conv + "' and '" + site.bn +
           "' must be in eval mode (torch's fuse_conv_bn_eval asserts "
           "\"Fusion only for eval!\"); call .eval() first");
  }
  fxp::Tensor weight(g.get_attr_tensor((site.conv + ".weight").c_str()));
  if (weight.dl().dtype.bits == 64) {
    fold_into_conv<double>(g, site, weight);
  } else {
    fold_into_conv<float>(g, site, weight);
  }
}

}  // namespace

bool fuse(Graph& g, const fxp::Options&) {
  bool changed = false;
  ModuleTypes types(g);
  for (const FusePattern& pattern : kFusePatterns) {
    for (Node bn : g) {
      if (!matches(types, pattern, bn)) continue;
      Node conv = bn.arg(0).node();
      if (conv.num_users() > 1) continue;
      FoldSite site{std::string(conv.target()), std::string(bn.target()),
                    pattern.conv, Arg()};
      site.bn_config = fxp::module_config(g, site.bn.c_str());
      if (!tracks_running_stats(g, site.bn, site.bn_config)) continue;
      fold(g, site);
      bn.replace_all_uses_with(conv);
      types.forget(bn);
      g.erase_node(bn);
      changed = true;
    }
  }
  return changed;
}

}  // namespace fx_optimization
