#include "plugins/inference/batch_norm.h"

#include <cmath>
#include <utility>

#include "plugins/common/rewrite_util.h"

namespace fx_inference {

bool is_batch_norm(fxp::Graph& g, const fxp::Node& bn) {
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

std::optional<std::vector<double>> float_values(const fxp::Graph& g,
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

std::string store_float(fxp::Graph& g, const std::string& base,
                        const std::vector<int64_t>& shape,
                        const std::vector<double>& values) {
  fxp::Tensor t = fxp::make_tensor(shape, fxp::kFloat32);
  float* data = t.mutable_data<float>();
  for (size_t i = 0; i < values.size(); ++i) {
    data[i] = static_cast<float>(values[i]);
  }
  std::string name = fx_plugins::fresh_attr_name(g, base);
  g.set_attr_tensor(name.c_str(), t.release());
  return name;
}

std::optional<BatchNormStatistics> batch_norm_statistics(
    fxp::Graph& g, const std::string& target) {
  auto mean = float_values(g, target + ".running_mean", nullptr);
  auto var = float_values(g, target + ".running_var", nullptr);
  if (!mean || !var || mean->size() != var->size()) return std::nullopt;
  BatchNormStatistics s;
  s.mean = std::move(*mean);
  s.var = std::move(*var);
  s.weight.assign(s.channels(), 1.0);
  s.bias.assign(s.channels(), 0.0);
  for (auto [name, into] : {std::pair{target + ".weight", &s.weight},
                            std::pair{target + ".bias", &s.bias}}) {
    if (!g.has_attr(name.c_str())) continue;  // affine=False
    auto v = float_values(g, name, nullptr);
    if (!v || v->size() != s.channels()) return std::nullopt;
    *into = std::move(*v);
  }
  fxp::Arg config = fxp::module_config(g, target.c_str());
  if (fxp::ArgView eps = fxp::dict_get(config.view(), "eps")) {
    s.eps = eps.as_float();
  }
  return s;
}

std::optional<BatchNormAffine> batch_norm_affine(fxp::Graph& g,
                                                 const std::string& target) {
  std::optional<BatchNormStatistics> s = batch_norm_statistics(g, target);
  if (!s) return std::nullopt;
  BatchNormAffine a;
  a.scale.resize(s->channels());
  a.shift.resize(s->channels());
  for (size_t c = 0; c < s->channels(); ++c) {
    // float32 throughout, one rounding an operation, as the kernel does.
    const float invstd =
        static_cast<float>(1.0 / std::sqrt(s->var[c] + s->eps));
    const float scale = invstd * static_cast<float>(s->weight[c]);
    const float product = static_cast<float>(s->mean[c]) * scale;
    a.scale[c] = scale;
    a.shift[c] = static_cast<float>(s->bias[c]) - product;
  }
  return a;
}

}  // namespace fx_inference
