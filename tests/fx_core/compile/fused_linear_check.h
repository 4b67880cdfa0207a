// For the fused-linear kernels' tests (OnednnLinear, BlasLinear, PanelLinear):
// fx_inference.linear's reference kernel (ATen's linear, add and
// activation, through PyTorch's dispatcher; the op registry links it), and
// one kernel checked against it on random operands.
#ifndef TESTS_FX_CORE_COMPILE_FUSED_LINEAR_CHECK_H_
#define TESTS_FX_CORE_COMPILE_FUSED_LINEAR_CHECK_H_

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "fx_core/compile/fused_linear.h"

namespace fx {
namespace testing {

inline at::Tensor linear_reference(const at::Tensor& x, const at::Tensor& w,
                                   const at::Tensor& b,
                                   const at::Tensor* residual,
                                   const FusedLinearParams& p) {
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("fx_inference::linear", "")
          .typed<at::Tensor(const at::Tensor&, const at::Tensor&,
                            const c10::optional<at::Tensor>&,
                            const c10::optional<at::Tensor>&, c10::string_view,
                            double, double)>();
  return op.call(x, w,
                 b.defined() ? c10::optional<at::Tensor>(b) : c10::nullopt,
                 residual ? c10::optional<at::Tensor>(*residual) : c10::nullopt,
                 p.activation, p.min_val, p.max_val);
}

// The kernel `create(weight, bias, params, input_sizes)` makes for `x` and
// n outputs, with random weights (and bias and residual when asked),
// against the reference: run twice (the second run finds nothing left over
// from the first), then once after its weights are flushed from the caches
// (as linear_choice.h times it).
template <typename Create>
void check_fused_linear(Create create, const at::Tensor& x, int64_t n,
                        bool bias, bool residual, FusedLinearParams p,
                        const std::string& what) {
  const int64_t k = x.size(-1);
  at::Tensor w = at::randn({n, k}) * (1.0 / std::sqrt(double(k)));
  at::Tensor b = bias ? at::randn({n}) * 0.1 : at::Tensor();
  std::vector<int64_t> out_sizes = x.sizes().vec();
  out_sizes.back() = n;
  at::Tensor r = at::randn(out_sizes);
  p.has_residual = residual;
  std::unique_ptr<FusedLinearKernel> linear = create(w, b, p, x.sizes().vec());
  ASSERT_NE(linear, nullptr) << what;
  ASSERT_EQ(linear->output_sizes(), out_sizes) << what;
  const at::Tensor want = linear_reference(x, w, b, residual ? &r : nullptr, p);
  for (int run = 0; run < 3; ++run) {
    if (run == 2) linear->evict_weights();
    at::Tensor got = at::full(out_sizes, NAN);
    linear->run(x, residual ? &r : nullptr, got);
    EXPECT_TRUE(at::allclose(got, want, 1e-4, 1e-5))
        << what << ", run " << run
        << ": max |got - want| = " << (got - want).abs().max().item<double>();
  }
}

}  // namespace testing
}  // namespace fx

#endif  // TESTS_FX_CORE_COMPILE_FUSED_LINEAR_CHECK_H_
