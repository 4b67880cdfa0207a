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

// torch's matches_module_pattern over its three patterns: the pattern
// whose BatchNorm type `bn` calls, on a call_module of its convolution
// type; nullptr when none.
const FusePattern* matching_pattern(ModuleTypes& types, const Node& bn) {
  const std::string& called = types.called(bn);
  if (called.empty() || bn.num_args() == 0 || !bn.arg(0).is_node()) {
    return nullptr;
  }
  for (const FusePattern& p : kFusePatterns) {
    if (called == p.batch_norm) {
      return types.called(bn.arg(0).node()) == p.conv ? &p : nullptr;
    }
  }
  return nullptr;
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

// Per-channel values of `name` (the tensor `t`), or `fill` for each
// channel when the module has no such attribute (`t` empty: no conv bias;
// an affine-less BatchNorm).
template <typename T>
std::vector<T> channel_values(const fxp::Tensor& t, const std::string& name,
                              size_t channels, T fill) {
  if (!t) return std::vector<T>(channels, fill);
  std::vector<T> v = values_of<T>(t, name);
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

// The tensors a fold reads, each asked of the host once; an absent one
// (no conv bias, an affine-less BatchNorm) is empty.
struct FoldInputs {
  fxp::Tensor weight, bias, mean, var, gamma, beta;
};

// fuse_conv_bn_weights (torch/nn/utils/fusion.py) in T's arithmetic, then
// the results set as the convolution's weight and bias.
template <typename T>
void fold_into_conv(Graph& g, const FoldSite& site, const FoldInputs& in) {
  const std::string& conv = site.conv;
  const std::string& bn = site.bn;
  std::vector<int64_t> shape;
  std::vector<T> w = values_of<T>(in.weight, conv + ".weight", &shape);
  const size_t channels = shape.empty() ? 0 : static_cast<size_t>(shape[0]);
  if (channels == 0) refuse("'" + conv + ".weight' has no output channels");
  std::vector<T> mean =
      channel_values<T>(in.mean, bn + ".running_mean", channels, 0);
  std::vector<T> var =
      channel_values<T>(in.var, bn + ".running_var", channels, 0);
  std::vector<T> gamma =
      channel_values<T>(in.gamma, bn + ".weight", channels, 1);
  std::vector<T> beta = channel_values<T>(in.beta, bn + ".bias", channels, 0);
  std::vector<T> b = channel_values<T>(in.bias, conv + ".bias", channels, 0);
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
  if (!in.bias) give_bias(g, conv, site.conv_type);
  g.set_attr_tensor((conv + ".weight").c_str(), tensor_of(shape, w).release());
  g.set_attr_tensor((conv + ".bias").c_str(),
                    tensor_of({static_cast<int64_t>(channels)}, b).release());
}

// Folds the BatchNorm into the convolution; `in` holds its running
// statistics.
void fold(Graph& g, const FoldSite& site, FoldInputs& in) {
  if (g.module_training(site.conv.c_str()) == 1 ||
      g.module_training(site.bn.c_str()) == 1) {
    refuse("'" + site.conv + "' and '" + site.bn +
           "' must be in eval mode (torch's fuse_conv_bn_eval asserts "
           "\"Fusion only for eval!\"); call .eval() first");
  }
  in.weight = fxp::Tensor(g.get_attr_tensor((site.conv + ".weight").c_str()));
  in.bias = fxp::Tensor(g.find_attr_tensor((site.conv + ".bias").c_str()));
  in.gamma = fxp::Tensor(g.find_attr_tensor((site.bn + ".weight").c_str()));
  in.beta = fxp::Tensor(g.find_attr_tensor((site.bn + ".bias").c_str()));
  if (in.weight.dl().dtype.bits == 64) {
    fold_into_conv<double>(g, site, in);
  } else {
    fold_into_conv<float>(g, site, in);
  }
}

// The BatchNorm's running statistics when it uses them (its config says
// track_running_stats and it holds both), else false.
bool running_stats(const Graph& g, const FoldSite& site, FoldInputs* in) {
  ArgView track = fxp::dict_get(site.bn_config.view(), "track_running_stats");
  if (track && !track.as_bool()) return false;
  in->mean =
      fxp::Tensor(g.find_attr_tensor((site.bn + ".running_mean").c_str()));
  in->var = fxp::Tensor(g.find_attr_tensor((site.bn + ".running_var").c_str()));
  return in->mean && in->var;
}

}  // namespace

// torch runs its patterns one after another over the whole graph. A
// BatchNorm matches at most one (each pattern has its own BatchNorm class)
// and folds of different patterns write different convolutions, so one
// walk in graph order folds the same pairs into the same numbers.
bool fuse(Graph& g, const fxp::Options&) {
  bool changed = false;
  ModuleTypes types(g);
  for (Node bn : g) {
    const FusePattern* pattern = matching_pattern(types, bn);
    if (pattern == nullptr) continue;
    Node conv = bn.arg(0).node();
    if (conv.num_users() > 1) continue;
    FoldSite site{std::string(conv.target()), std::string(bn.target()),
                  pattern->conv, Arg()};
    site.bn_config = fxp::module_config(g, site.bn.c_str());
    FoldInputs in;
    if (!running_stats(g, site, &in)) continue;
    fold(g, site, in);
    bn.replace_all_uses_with(conv);
    types.forget(bn);
    g.erase_node(bn);
    changed = true;
  }
  return changed;
}

}  // namespace fx_optimization
