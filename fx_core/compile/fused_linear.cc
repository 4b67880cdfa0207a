#include "fx_core/compile/fused_linear.h"

#include <ATen/ATen.h>

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

bool known_linear_activation(const std::string& a) {
  for (const char* name : {"none", "relu", "hardtanh", "hardswish", "silu",
                           "sigmoid", "hardsigmoid", "gelu", "gelu_tanh"}) {
    if (a == name) return true;
  }
  return false;
}

void activate_in_place(at::Tensor& t, const FusedLinearParams& p) {
  const std::string& a = p.activation;
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
