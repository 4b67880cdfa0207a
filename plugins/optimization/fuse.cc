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
// convolution without bias is rebuilt with one). As torch's fuse works on a
// retrace, nodes are named and annotated as symbolic_trace leaves them.
// Like torch's fuse (which asserts it), modules in training mode are
// refused: run it on an eval-mode graph.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/plugin_util.h"
#include "plugins/optimization/module_types.h"
#include "plugins/optimization/passes.h"
#include "plugins/optimization/retrace.h"

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

// A module tensor's name, `<module>.<attribute>`, built in one buffer that
// every read of a pass reuses (no allocation per read once it has grown).
class AttrName {
 public:
  const char* of(std::string_view module, std::string_view attribute) {
    text_.assign(module).append(1, '.').append(attribute);
    return text_.c_str();
  }
  static std::string text(std::string_view module, std::string_view attribute) {
    return std::string(module) + "." + std::string(attribute);
  }

 private:
  std::string text_;
};

// The elements of `t`, the tensor `module`.`attribute`, read in place.
// Refused when it is of another dtype than T or not contiguous.
template <typename T>
const T* elements_of(const fxp::Tensor& t, std::string_view module,
                     std::string_view attribute) {
  const DLDataType dt = t.dl().dtype;
  if (dt.code != kDLFloat || dt.bits != sizeof(T) * 8 || dt.lanes != 1 ||
      !t.is_contiguous()) {
    refuse("'" + AttrName::text(module, attribute) +
           "' is not a contiguous tensor of the convolution weight's dtype "
           "(float32 or float64)");
  }
  return t.data<T>();
}

// Per-channel values of `module`.`attribute` (the tensor `t`), read in
// place, or `fill` for each channel when the module has no such attribute
// (`t` empty: no conv bias; an affine-less BatchNorm).
template <typename T>
class ChannelValues {
 public:
  ChannelValues(const fxp::Tensor& t, std::string_view module,
                std::string_view attribute, int64_t channels, T fill)
      : fill_(fill) {
    if (!t) return;
    data_ = elements_of<T>(t, module, attribute);
    if (t.numel() != channels) {
      refuse("'" + AttrName::text(module, attribute) + "' has " +
             std::to_string(t.numel()) + " values; the convolution has " +
             std::to_string(channels) + " output channels");
    }
  }
  T operator[](int64_t c) const { return data_ != nullptr ? data_[c] : fill_; }

 private:
  const T* data_ = nullptr;
  T fill_;
};

// A new tensor of T's dtype with the sizes of the DLPack tensor `like`.
template <typename T>
fxp::Tensor new_tensor_like(const fxp::Tensor& like) {
  const DLTensor& dl = like.dl();
  return fxp::make_tensor(std::vector<int64_t>(dl.shape, dl.shape + dl.ndim),
                          sizeof(T) == 4 ? fxp::kFloat32 : fxp::kFloat64);
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
  std::string_view conv;  // the convolution's target (the node's own text)
  std::string_view bn;    // the BatchNorm's target
  const char* conv_type;
  Arg bn_config;  // the BatchNorm's constructor arguments
};

// The tensors a fold reads, each asked of the host once; an absent one
// (no conv bias, an affine-less BatchNorm) is empty.
struct FoldInputs {
  fxp::Tensor weight, bias, mean, var, gamma, beta;
};

// fuse_conv_bn_weights (torch/nn/utils/fusion.py) in T's arithmetic, read
// from the host's views and written straight into the new tensors, which
// are then set as the convolution's weight and bias.
template <typename T>
void fold_into_conv(Graph& g, const FoldSite& site, const FoldInputs& in,
                    AttrName& name) {
  const T* w = elements_of<T>(in.weight, site.conv, "weight");
  const int64_t channels = in.weight.ndim() == 0 ? 0 : in.weight.dl().shape[0];
  if (channels <= 0) {
    refuse("'" + AttrName::text(site.conv, "weight") +
           "' has no output channels");
  }
  const ChannelValues<T> mean(in.mean, site.bn, "running_mean", channels, 0);
  const ChannelValues<T> var(in.var, site.bn, "running_var", channels, 0);
  const ChannelValues<T> gamma(in.gamma, site.bn, "weight", channels, 1);
  const ChannelValues<T> beta(in.beta, site.bn, "bias", channels, 0);
  const ChannelValues<T> bias(in.bias, site.conv, "bias", channels, 0);
  ArgView eps_arg = fxp::dict_get(site.bn_config.view(), "eps");
  const T eps = static_cast<T>(eps_arg ? eps_arg.as_float() : 1e-5);
  fxp::Tensor new_weight = new_tensor_like<T>(in.weight);
  fxp::Tensor new_bias = fxp::make_tensor({channels}, new_weight.dl().dtype);
  T* out_w = new_weight.mutable_data<T>();
  T* out_b = new_bias.mutable_data<T>();
  const int64_t per_channel = in.weight.numel() / channels;
  for (int64_t c = 0; c < channels; ++c) {
    const T var_rsqrt = T(1) / std::sqrt(var[c] + eps);
    const T scale = gamma[c] * var_rsqrt;
    for (int64_t i = c * per_channel; i < (c + 1) * per_channel; ++i) {
      out_w[i] = w[i] * scale;
    }
    const T centred = (bias[c] - mean[c]) * var_rsqrt;
    out_b[c] = centred * gamma[c] + beta[c];
  }
  if (!in.bias) give_bias(g, std::string(site.conv), site.conv_type);
  g.set_attr_tensor(name.of(site.conv, "weight"), new_weight.release());
  g.set_attr_tensor(name.of(site.conv, "bias"), new_bias.release());
}

// Folds the BatchNorm into the convolution; `in` holds its running
// statistics.
void fold(Graph& g, const FoldSite& site, FoldInputs& in, AttrName& name) {
  const std::string conv(site.conv), bn(site.bn);
  if (g.module_training(conv.c_str()) == 1 ||
      g.module_training(bn.c_str()) == 1) {
    refuse("'" + conv + "' and '" + bn +
           "' must be in eval mode (torch's fuse_conv_bn_eval asserts "
           "\"Fusion only for eval!\"); call .eval() first");
  }
  in.weight = fxp::Tensor(g.get_attr_tensor(name.of(conv, "weight")));
  in.bias = fxp::Tensor(g.find_attr_tensor(name.of(conv, "bias")));
  in.gamma = fxp::Tensor(g.find_attr_tensor(name.of(bn, "weight")));
  in.beta = fxp::Tensor(g.find_attr_tensor(name.of(bn, "bias")));
  if (in.weight.dl().dtype.bits == 64) {
    fold_into_conv<double>(g, site, in, name);
  } else {
    fold_into_conv<float>(g, site, in, name);
  }
}

// The BatchNorm's running statistics when it uses them (its config says
// track_running_stats and it holds both), else false.
bool running_stats(const Graph& g, const FoldSite& site, FoldInputs* in,
                   AttrName& name) {
  ArgView track = fxp::dict_get(site.bn_config.view(), "track_running_stats");
  if (track && !track.as_bool()) return false;
  in->mean = fxp::Tensor(g.find_attr_tensor(name.of(site.bn, "running_mean")));
  in->var = fxp::Tensor(g.find_attr_tensor(name.of(site.bn, "running_var")));
  return in->mean && in->var;
}

}  // namespace

// torch's fuse edits symbolic_trace(model)'s graph: first, as that
// retrace, calls reading no node go (the trace runs them), every node
// torch's trace names otherwise (make_fx's `t` is `t_default`) is renamed,
// the namespace holds the live names only and type annotations other than
// the placeholders' and the output's go (meta is kept). torch runs its
// patterns one after another over the whole graph. A BatchNorm matches at
// most one (each pattern has its own BatchNorm class) and folds of
// different patterns write different convolutions, so one walk in graph
// order folds the same pairs into the same numbers. An erased BatchNorm's
// name stays taken, as in torch's copy of the traced graph.
bool fuse(Graph& g, const fxp::Options&) {
  bool changed = symbolic_retrace(g, "fuse");
  ModuleTypes types(g);
  AttrName name;
  for (Node bn : g) {
    const FusePattern* pattern = matching_pattern(types, bn);
    if (pattern == nullptr) continue;
    Node conv = bn.arg(0).node();
    if (conv.num_users() > 1) continue;
    FoldSite site{conv.target(), bn.target(), pattern->conv, Arg()};
    site.bn_config = fxp::module_config(g, std::string(site.bn).c_str());
    FoldInputs in;
    if (!running_stats(g, site, &in, name)) continue;
    fold(g, site, in, name);
    bn.replace_all_uses_with(conv);
    types.forget(bn);
    g.erase_node(bn);
    changed = true;
  }
  return changed;
}

}  // namespace fx_optimization
