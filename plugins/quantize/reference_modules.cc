// Reading PyTorch's reference quantized modules (reference_modules.h).
#include "plugins/quantize/reference_modules.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace fx_quant {
namespace {

using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;

constexpr const char* kReferenceConv2d =
    "torch.ao.nn.quantized.reference.modules.conv.Conv2d";
constexpr const char* kReferenceLinear =
    "torch.ao.nn.quantized.reference.modules.linear.Linear";
constexpr const char* kFused = "torch.ao.nn.intrinsic.modules.fused.";

// The constructor arguments of the quantized Conv2d / ConvReLU2d: the
// reference Conv2d's own (those it leaves out take the same defaults), or
// nullopt for a padding the quantized module does not take ('same').
std::optional<Arg> conv_config(ArgView reference) {
  std::vector<std::pair<std::string, Arg>> items;
  for (const char* key :
       {"in_channels", "out_channels", "kernel_size", "stride", "padding",
        "dilation", "groups", "bias", "padding_mode"}) {
    ArgView value = fxp::dict_get(reference, key);
    if (!value) continue;
    if (std::string(key) == "padding" && value.kind() == FX_ARG_STRING) {
      return std::nullopt;
    }
    items.emplace_back(key, Arg(value));
  }
  return Arg::dict(items);
}

// The quantized Linear's (bias_) or LinearReLU's (bias) arguments from the
// reference Linear's (bias_).
Arg linear_config(ArgView reference, bool relu) {
  std::vector<std::pair<std::string, Arg>> items;
  for (const char* key : {"in_features", "out_features"}) {
    if (ArgView value = fxp::dict_get(reference, key)) {
      items.emplace_back(key, Arg(value));
    }
  }
  if (ArgView bias = fxp::dict_get(reference, "bias_")) {
    items.emplace_back(relu ? "bias" : "bias_", Arg(bias));
  }
  return Arg::dict(items);
}

// The weight's qparams as quantize_per_channel / quantize_per_tensor take
// them: one scale and zero point per output channel (axis 0) or one.
struct WeightQParams {
  std::vector<double> scales;
  std::vector<int64_t> zero_points;
  int64_t axis = -1;
};

// Element i of an integer tensor (int64 or int32) as int64.
int64_t int_at(const fxp::Tensor& t, int64_t i) {
  return t.dl().dtype.bits == 64 ? t.data<int64_t>()[i] : t.data<int32_t>()[i];
}

bool int_tensor(const fxp::Tensor& t) {
  return t && t.dl().dtype.code == kDLInt &&
         (t.dl().dtype.bits == 64 || t.dl().dtype.bits == 32) &&
         t.is_contiguous();
}

// qint8 per tensor or per channel along axis 0 of a weight with `channels`
// output channels; nullopt for anything else.
std::optional<WeightQParams> weight_qparams(const Graph& g,
                                            const std::string& path,
                                            ArgView config, int64_t channels) {
  ArgView qparams = fxp::dict_get(config, "weight_qparams");
  if (!qparams || qparams.kind() != FX_ARG_DICT) return std::nullopt;
  ArgView qscheme = fxp::dict_get(qparams, "qscheme");
  ArgView dtype = fxp::dict_get(qparams, "dtype");
  if (!qscheme || !dtype || qscheme.is_none() ||
      dtype.as_string() != "torch.qint8") {
    return std::nullopt;
  }
  const std::string scheme = qscheme.as_string();
  const bool per_channel = scheme == "torch.per_channel_affine";
  if (!per_channel && scheme != "torch.per_tensor_affine") return std::nullopt;
  fxp::Tensor scale(g.find_attr_tensor((path + ".weight_scale").c_str()));
  fxp::Tensor zero_point(
      g.find_attr_tensor((path + ".weight_zero_point").c_str()));
  fxp::Tensor axis(g.find_attr_tensor((path + ".weight_axis").c_str()));
  const int64_t count = per_channel ? channels : 1;
  if (!scale || scale.dl().dtype.code != kDLFloat || !scale.is_contiguous() ||
      scale.numel() != count || !int_tensor(zero_point) ||
      zero_point.numel() != count) {
    return std::nullopt;
  }
  WeightQParams q;
  if (per_channel) {
    if (!int_tensor(axis) || axis.numel() != 1 || int_at(axis, 0) != 0) {
      return std::nullopt;
    }
    q.axis = 0;
  }
  for (int64_t c = 0; c < count; ++c) {
    q.scales.push_back(scale.float_at(c));
    q.zero_points.push_back(int_at(zero_point, c));
  }
  return q;
}

// torch.quantize_per_channel / quantize_per_tensor of a float32 weight to
// qint8, element by element as LibTorch's quantize_val computes it (fbgemm's
// Quantize): zero_point + nearbyint(value * (1.0f / float(scale))),
// clamped to [-128, 127].
fxp::Tensor quantize_weight(const fxp::Tensor& weight, const WeightQParams& q) {
  const std::vector<int64_t> shape = weight.shape();
  fxp::Tensor out = fxp::make_tensor(shape, fxp::kInt8);
  const int64_t n = weight.numel();
  const int64_t groups = static_cast<int64_t>(q.scales.size());
  const int64_t per_group = groups > 0 ? n / groups : 0;
  const float* in = weight.data<float>();
  int8_t* values = out.mutable_data<int8_t>();
  for (int64_t c = 0; c < groups; ++c) {
    const float inverse = 1.0f / static_cast<float>(q.scales[c]);
    const float zero_point = static_cast<float>(q.zero_points[c]);
    for (int64_t i = c * per_group; i < (c + 1) * per_group; ++i) {
      const double v = zero_point + std::nearbyint(in[i] * inverse);
      values[i] = static_cast<int8_t>(std::clamp(v, -128.0, 127.0));
    }
  }
  return out;
}

fxp::Tensor copy_of(const std::vector<double>& v) {
  fxp::Tensor t =
      fxp::make_tensor({static_cast<int64_t>(v.size())}, fxp::kFloat64);
  std::copy(v.begin(), v.end(), t.mutable_data<double>());
  return t;
}

fxp::Tensor copy_of(const std::vector<int64_t>& v) {
  fxp::Tensor t =
      fxp::make_tensor({static_cast<int64_t>(v.size())}, fxp::kInt64);
  std::copy(v.begin(), v.end(), t.mutable_data<int64_t>());
  return t;
}

}  // namespace

std::optional<ReferenceModule> reference_module(const Graph& g,
                                                const std::string& target) {
  auto weighted = [&](const std::string& path,
                      bool relu) -> std::optional<ReferenceModule> {
    const std::string type = g.module_type(path.c_str());
    if (type == kReferenceConv2d) return ReferenceModule{path, true, relu};
    if (type == kReferenceLinear) return ReferenceModule{path, false, relu};
    return std::nullopt;
  };
  const std::string type = g.module_type(target.c_str());
  if (type == std::string(kFused) + "ConvReLU2d" ||
      type == std::string(kFused) + "LinearReLU") {
    if (g.module_type((target + ".1").c_str()) != "torch.nn.ReLU") {
      return std::nullopt;
    }
    return weighted(target + ".0", true);
  }
  return weighted(target, false);
}

std::optional<QuantizedParts> quantized_parts(const Graph& g,
                                              const ReferenceModule& m,
                                              bool relu) {
  const Arg config = fxp::module_config(g, m.path.c_str());
  fxp::Tensor weight(g.get_attr_tensor((m.path + ".weight").c_str()));
  const DLDataType dt = weight.dl().dtype;
  if (dt.code != kDLFloat || dt.bits != 32 || !weight.is_contiguous() ||
      weight.ndim() != (m.conv ? 4 : 2)) {
    return std::nullopt;
  }
  std::optional<WeightQParams> q =
      weight_qparams(g, m.path, config.view(), weight.shape()[0]);
  if (!q) return std::nullopt;
  QuantizedParts parts;
  if (m.conv) {
    std::optional<Arg> c = conv_config(config.view());
    if (!c) return std::nullopt;
    parts.config = std::move(*c);
  } else {
    parts.config = linear_config(config.view(), relu);
  }
  parts.values = quantize_weight(weight, *q);
  parts.scales = copy_of(q->scales);
  parts.zero_points = copy_of(q->zero_points);
  parts.axis = q->axis;
  parts.bias = fxp::Tensor(g.find_attr_tensor((m.path + ".bias").c_str()));
  return parts;
}

}  // namespace fx_quant
