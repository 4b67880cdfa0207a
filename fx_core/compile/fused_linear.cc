#include "fx_core/compile/fused_linear.h"

#include <ATen/ATen.h>

#include <utility>

namespace fx {

bool fused_linear_supported(const at::Tensor& w, const at::Tensor& bias,
                            const std::vector<int64_t>& in) {
  if (w.scalar_type() != at::kFloat || w.dim() != 2 || !w.device().is_cpu() ||
      w.layout() != at::kStrided || in.empty() || in.back() != w.size(1)) {
    return false;
  }
  if (bias.defined() && (bias.scalar_type() != at::kFloat || bias.dim() != 1 ||
                         bias.size(0) != w.size(0) || !bias.device().is_cpu() ||
                         bias.layout() != at::kStrided)) {
    return false;
  }
  for (int64_t s : in) {
    if (s < 1) return false;
  }
  return w.size(0) >= 1;
}

FusedLinearShape::FusedLinearShape(std::vector<int64_t> in, int64_t n_out)
    : input_sizes(std::move(in)), output_sizes(input_sizes), n(n_out) {
  k = input_sizes.back();
  output_sizes.back() = n;
  for (size_t i = 0; i + 1 < input_sizes.size(); ++i) rows *= input_sizes[i];
}

bool known_linear_activation(const std::string& a) {
  for (const char* name : {"none", "relu", "hardtanh", "hardswish", "silu",
                           "sigmoid", "hardsigmoid", "gelu", "gelu_tanh"}) {
    if (a == name) return true;
  }
  return false;
}

void activate_columns(const at::Tensor& out, int64_t from, int64_t to,
                      const FusedLinearParams& p) {
  const std::string& a = p.activation;
  if (a == "none") return;
  at::Tensor t = out.view({-1, out.size(-1)}).narrow(1, from, to - from);
  if (a == "relu") {
    at::relu_(t);
  } else if (a == "hardtanh") {
    at::hardtanh_(t, p.min_val, p.max_val);
  } else if (a == "hardswish") {
    at::hardswish_(t);
  } else if (a == "silu") {
    at::silu_(t);
  } else if (a == "sigmoid") {
    at::sigmoid_(t);
  } else if (a == "hardsigmoid") {
    at::hardsigmoid_(t);
  } else if (a == "gelu" || a == "gelu_tanh") {
    at::gelu_out(t, t, a == "gelu" ? "none" : "tanh");
  }
}

}  // namespace fx
