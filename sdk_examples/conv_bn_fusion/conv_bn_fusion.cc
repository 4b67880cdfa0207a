// Conv2d + BatchNorm2d fusion as a plugin pass (the torch.fx docs' "Conv/
// Batch Norm fusion" example), written against the C ABI only.
//
// For every BatchNorm2d whose input is a Conv2d used by nothing else, in an
// inference graph (the batch norm's running statistics are what it
// applies): the conv is replaced by a Conv2d with a bias whose weight and
// bias fold the normalisation in,
//     scale = gamma / sqrt(running_var + eps)
//     W'    = W * scale[out_channel]
//     b'    = (b - running_mean) * scale + beta
// and the batch norm node disappears. The module computes the same values
// (to rounding) with one node less per pair.
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "fx/plugin_api.hpp"

namespace {

// A float32 tensor the plugin owns, handed to the host as DLPack.
struct OwnedTensor {
  DLManagedTensor managed{};
  std::vector<int64_t> shape;
  std::vector<float> data;

  static DLManagedTensor* make(std::vector<int64_t> shape,
                               std::vector<float> data) {
    auto* t = new OwnedTensor();
    t->shape = std::move(shape);
    t->data = std::move(data);
    DLTensor& d = t->managed.dl_tensor;
    d.data = t->data.data();
    d.device = DLDevice{kDLCPU, 0};
    d.ndim = static_cast<int32_t>(t->shape.size());
    d.dtype = DLDataType{kDLFloat, 32, 1};
    d.shape = t->shape.data();
    t->managed.manager_ctx = t;
    t->managed.deleter = [](DLManagedTensor* self) {
      delete static_cast<OwnedTensor*>(self->manager_ctx);
    };
    return &t->managed;
  }
};

// The float32 values of attribute `name` (contiguous copy), and its shape.
std::vector<float> read(const fxp::Graph& g, const std::string& name,
                        std::vector<int64_t>* shape = nullptr) {
  DLManagedTensor* t = g.get_attr_tensor(name.c_str());
  const DLTensor& d = t->dl_tensor;
  if (d.dtype.code != kDLFloat || d.dtype.bits != 32) {
    if (t->deleter) t->deleter(t);
    throw fxp::Error(FX_INVALID_ARGUMENT, name + " is not float32");
  }
  std::vector<int64_t> dims(d.shape, d.shape + d.ndim);
  int64_t count = 1;
  for (int64_t s : dims) count *= s;
  // Walk the strides so any layout reads right.
  std::vector<float> out(count);
  const float* base = reinterpret_cast<const float*>(
      static_cast<const char*>(d.data) + d.byte_offset);
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, offset = 0, stride = 1;
    for (int k = d.ndim - 1; k >= 0; --k) {
      int64_t idx = rest % dims[k];
      rest /= dims[k];
      offset += idx * (d.strides ? d.strides[k] : stride);
      stride *= dims[k];
    }
    out[i] = base[offset];
  }
  if (t->deleter) t->deleter(t);
  if (shape) *shape = dims;
  return out;
}

bool fuse_conv_bn(fxp::Graph& g, const fxp::Options&) {
  bool changed = false;
  for (fxp::Node bn : g) {
    if (bn.op() != FX_OP_CALL_MODULE ||
        g.module_type(bn.target_cstr()) != "torch.nn.BatchNorm2d" ||
        bn.num_args() != 1 || !bn.arg(0).is_node()) {
      continue;
    }
    fxp::Node conv = bn.arg(0).node();
    if (conv.op() != FX_OP_CALL_MODULE || conv.num_users() != 1 ||
        g.module_type(conv.target_cstr()) != "torch.nn.Conv2d") {
      continue;
    }
    const std::string c(conv.target()), b(bn.target());
    fxp::Arg bn_config = fxp::module_config(g, b.c_str());
    fxp::ArgView track = fxp::dict_get(bn_config, "track_running_stats");
    if (track && !track.as_bool()) continue;  // no running statistics
    double eps = fxp::dict_get(bn_config, "eps").as_float();

    std::vector<int64_t> w_shape;
    std::vector<float> w = read(g, c + ".weight", &w_shape);
    const int64_t out_channels = w_shape[0];
    const int64_t per_channel = static_cast<int64_t>(w.size()) / out_channels;
    std::vector<float> bias(out_channels, 0.0f);
    if (g.has_attr((c + ".bias").c_str())) bias = read(g, c + ".bias");
    std::vector<float> mean = read(g, b + ".running_mean");
    std::vector<float> var = read(g, b + ".running_var");
    std::vector<float> gamma(out_channels, 1.0f), beta(out_channels, 0.0f);
    if (g.has_attr((b + ".weight").c_str())) {
      gamma = read(g, b + ".weight");
      beta = read(g, b + ".bias");
    }
    for (int64_t o = 0; o < out_channels; ++o) {
      double scale = gamma[o] / std::sqrt(static_cast<double>(var[o]) + eps);
      for (int64_t k = 0; k < per_channel; ++k) {
        w[o * per_channel + k] =
            static_cast<float>(w[o * per_channel + k] * scale);
      }
      bias[o] = static_cast<float>((bias[o] - mean[o]) * scale + beta[o]);
    }

    // The conv, rebuilt with a bias, takes the folded parameters.
    fxp::Arg conv_config = fxp::module_config(g, c.c_str());
    std::vector<std::pair<std::string, fxp::Arg>> items;
    for (size_t i = 0; i < conv_config.view().size(); ++i) {
      std::string key = conv_config.view().key(i);
      if (key == "bias") {
        items.emplace_back(key, fxp::Arg(true));
      } else {
        items.emplace_back(key, fxp::Arg(conv_config.view()[i]));
      }
    }
    fxp::add_module(g, c.c_str(), "torch.nn.Conv2d", fxp::Arg::dict(items));
    g.set_attr_tensor((c + ".weight").c_str(),
                      OwnedTensor::make(w_shape, std::move(w)));
    g.set_attr_tensor((c + ".bias").c_str(),
                      OwnedTensor::make({out_channels}, std::move(bias)));
    bn.replace_all_uses_with(conv);
    g.erase_node(bn);
    changed = true;
  }
  return changed;
}

}  // namespace

FXP_PLUGIN("conv_bn_fusion", "1.0",
           fxp::pass<fuse_conv_bn>(
               "fuse_conv_bn",
               "folds BatchNorm2d (inference) into the Conv2d before it")
               .invalidates({"tensor_meta"}))
