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

}  // namespace fx
