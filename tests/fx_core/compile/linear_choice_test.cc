// fx::choose_onednn_linear: the policy (environment variable, setter), and
// the measurement made once per shape, tail and thread count, its decision
// cached. What the plan computes under each policy is in
// onednn_linear_test.cc.
#include "fx_core/compile/linear_choice.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "fx_core/runtime/parallel.h"
#include "fx_core/support/error.h"

namespace fx {
namespace {

FusedLinearParams gelu() {
  FusedLinearParams p;
  p.activation = "gelu";
  return p;
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
  EXPECT_NE(choose_onednn_linear(w, b, gelu(), in), nullptr);
  // What oneDNN cannot compute alike stays on the reference kernel.
  EXPECT_EQ(choose_onednn_linear(w.to(at::kDouble), b, gelu(), in), nullptr);
  set_linear_policy(LinearPolicy::kAten);
  EXPECT_EQ(choose_onednn_linear(w, b, gelu(), in), nullptr);
  EXPECT_EQ(linear_measurements(), before);
  // Nothing to measure when oneDNN cannot run it.
  set_linear_policy(LinearPolicy::kMeasure);
  EXPECT_EQ(choose_onednn_linear(w.to(at::kDouble), b, gelu(), in), nullptr);
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
  const size_t aten_before = linear_measurements_won_by_aten();
  const bool first_onednn = choose_onednn_linear(w, b, gelu(), in) != nullptr;
  EXPECT_EQ(linear_measurements(), before + 1);
  EXPECT_EQ(linear_measurements_won_by_aten(),
            aten_before + (first_onednn ? 0 : 1));
  // Other weights of the same shape: the cached decision.
  at::Tensor w2 = at::randn({96, 64});
  EXPECT_EQ(choose_onednn_linear(w2, b, gelu(), in) != nullptr, first_onednn);
  EXPECT_EQ(linear_measurements(), before + 1);
  // Another input size, another tail, no bias: each measured anew.
  choose_onednn_linear(w, b, gelu(), {7, 64});
  EXPECT_EQ(linear_measurements(), before + 2);
  FusedLinearParams residual = gelu();
  residual.has_residual = true;
  choose_onednn_linear(w, b, residual, in);
  EXPECT_EQ(linear_measurements(), before + 3);
  choose_onednn_linear(w, at::Tensor(), gelu(), in);
  EXPECT_EQ(linear_measurements(), before + 4);
  // So is another thread count, unless the BLAS has a pool of its own:
  // then oneDNN, unmeasured.
  at::set_num_threads(2);
  const bool onednn = choose_onednn_linear(w, b, gelu(), in) != nullptr;
  if (blas_has_own_thread_pool()) {
    EXPECT_TRUE(onednn);
    EXPECT_EQ(linear_measurements(), before + 4);
  } else {
    EXPECT_EQ(linear_measurements(), before + 5);
  }
  at::set_num_threads(threads);
}

// Whichever kernel won, a oneDNN linear the policy returns computes the
// reference's result (the plan runs the reference itself otherwise).
TEST(LinearChoice, ChosenLinearComputesTheReference) {
  set_linear_policy(LinearPolicy::kOnednn);
  at::manual_seed(6);
  at::Tensor w = at::randn({32, 48}) * 0.15, b = at::randn({32});
  at::Tensor x = at::randn({5, 48}), r = at::randn({5, 32});
  FusedLinearParams p = gelu();
  p.has_residual = true;
  auto linear = choose_onednn_linear(w, b, p, x.sizes().vec());
  ASSERT_NE(linear, nullptr);
  at::Tensor out = at::empty({5, 32});
  linear->run(x, &r, out);
  at::Tensor want = at::gelu(at::linear(x, w, b) + r);
  EXPECT_TRUE(at::allclose(out, want, 1e-4, 1e-5));
  set_linear_policy(LinearPolicy::kMeasure);
}

}  // namespace
}  // namespace fx
