// fx::choose_linear: the policy (environment variable, setter), and the
// measurement made once per shape, tail and thread count, its decision
// cached; the candidates timed with their weights flushed from the caches. What
// the plan computes under each policy is in onednn_linear_test.cc; BlasLinear's
// results in blas_linear_test.cc.
#include "fx_core/compile/linear_choice.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "fx_core/compile/blas_linear.h"
#include "fx_core/compile/panel_linear.h"
#include "fx_core/runtime/parallel.h"
#include "fx_core/support/error.h"

namespace fx {
namespace {

FusedLinearParams gelu() {
  FusedLinearParams p;
  p.activation = "gelu";
  return p;
}

size_t won_by_others() {
  return linear_measurements_won_by(LinearKernel::kBlas) +
         linear_measurements_won_by(LinearKernel::kAten) +
         linear_measurements_won_by(LinearKernel::kPanel);
}

// First in this file: the policy is read from the environment on first use.
TEST(LinearChoice, PolicyFromTheEnvironment) {
  ASSERT_EQ(setenv("FX_LINEAR_KERNEL", "fastest", 1), 0);
  try {
    linear_policy();
    ADD_FAILURE() << "no error for FX_LINEAR_KERNEL=fastest";
  } catch (const FxError& e) {
    EXPECT_NE(std::string(e.what()).find("FX_LINEAR_KERNEL=fastest"),
              std::string::npos)
        << e.what();
  }
  // Unset: measure.
  ASSERT_EQ(unsetenv("FX_LINEAR_KERNEL"), 0);
  EXPECT_EQ(linear_policy(), LinearPolicy::kMeasure);
  set_linear_policy(LinearPolicy::kAten);
  EXPECT_EQ(linear_policy(), LinearPolicy::kAten);
  set_linear_policy(LinearPolicy::kMeasure);
}

TEST(LinearChoice, PolicyPicksTheKernel) {
  at::Tensor w = at::randn({24, 16}), b = at::randn({24});
  const std::vector<int64_t> in{3, 16};
  const size_t before = linear_measurements();
  set_linear_policy(LinearPolicy::kOnednn);
  EXPECT_EQ(choose_linear(w, b, gelu(), in).kernel, LinearKernel::kOnednn);
  // What no kernel here computes alike stays on the reference kernel.
  EXPECT_EQ(choose_linear(w.to(at::kDouble), b, gelu(), in).kernel,
            LinearKernel::kAten);
  set_linear_policy(LinearPolicy::kBlas);
  EXPECT_EQ(choose_linear(w, b, gelu(), in).kernel, BlasLinear::available()
                                                        ? LinearKernel::kBlas
                                                        : LinearKernel::kAten);
  set_linear_policy(LinearPolicy::kPanel);
  EXPECT_EQ(choose_linear(w, b, gelu(), in).kernel, PanelLinear::available()
                                                        ? LinearKernel::kPanel
                                                        : LinearKernel::kAten);
  set_linear_policy(LinearPolicy::kAten);
  EXPECT_EQ(choose_linear(w, b, gelu(), in).kernel, LinearKernel::kAten);
  EXPECT_EQ(linear_measurements(), before);
  // Nothing to measure when no candidate can run it.
  set_linear_policy(LinearPolicy::kMeasure);
  EXPECT_EQ(choose_linear(w.to(at::kDouble), b, gelu(), in).kernel,
            LinearKernel::kAten);
  EXPECT_EQ(linear_measurements(), before);
}

TEST(LinearChoice, MeasuresOncePerShapeTailAndThreadCount) {
  set_linear_policy(LinearPolicy::kMeasure);
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  at::manual_seed(5);
  at::Tensor w = at::randn({96, 64}), b = at::randn({96});
  const std::vector<int64_t> in{2, 40, 64};
  const size_t before = linear_measurements();
  const size_t others_before = won_by_others();
  const LinearKernel first = choose_linear(w, b, gelu(), in).kernel;
  EXPECT_EQ(linear_measurements(), before + 1);
  EXPECT_EQ(won_by_others(),
            others_before + (first == LinearKernel::kOnednn ? 0 : 1));
  // Where the BLAS is OpenBLAS, the candidate beside oneDNN is BlasLinear.
  if (BlasLinear::available()) {
    EXPECT_NE(first, LinearKernel::kAten);
  }
  // Other weights of the same shape: the cached decision.
  at::Tensor w2 = at::randn({96, 64});
  EXPECT_EQ(choose_linear(w2, b, gelu(), in).kernel, first);
  EXPECT_EQ(linear_measurements(), before + 1);
  // Another input size, another tail, no bias: each measured anew.
  choose_linear(w, b, gelu(), {7, 64});
  EXPECT_EQ(linear_measurements(), before + 2);
  FusedLinearParams residual = gelu();
  residual.has_residual = true;
  choose_linear(w, b, residual, in);
  EXPECT_EQ(linear_measurements(), before + 3);
  choose_linear(w, at::Tensor(), gelu(), in);
  EXPECT_EQ(linear_measurements(), before + 4);
  // So is another thread count: measured too when BlasLinear or
  // PanelLinear can run it (they stay on LibTorch's threads); with a BLAS
  // that keeps a pool of its own and neither of them, oneDNN unmeasured.
  at::set_num_threads(2);
  const LinearKernel two = choose_linear(w, b, gelu(), in).kernel;
  if (!BlasLinear::available() && !PanelLinear::available() &&
      blas_has_own_thread_pool()) {
    EXPECT_EQ(two, LinearKernel::kOnednn);
    EXPECT_EQ(linear_measurements(), before + 4);
  } else {
    EXPECT_EQ(linear_measurements(), before + 5);
  }
  at::set_num_threads(threads);
}

}  // namespace
}  // namespace fx
