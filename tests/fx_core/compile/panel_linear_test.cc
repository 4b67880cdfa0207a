// fx::PanelLinear against fx_inference.linear's reference kernel (ATen's
// linear, add and activation, through PyTorch's dispatcher): every tile
// height (1-8 rows), partial panels (n not a multiple of 48), depths split
// in blocks (k over 512), row blocks (m over 256), the suite transformer's
// shapes, every activation, with and without bias and residual, strided and
// 1-d inputs, at 1 and 2 threads; weights shared through a SharedWeights;
// create() refuses what it cannot compute. Skipped on a CPU without
// AVX-512F (create() returns nullptr there, checked). The residual may be
// the output itself.
#include "fx_core/compile/panel_linear.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/compile/panel_gemm.h"
#include "fx_core/compile/shared_weights.h"
#include "tests/fx_core/compile/fused_linear_check.h"

namespace fx {
namespace {

void check(const at::Tensor& x, int64_t n, bool bias, bool residual,
           const FusedLinearParams& p, const std::string& what) {
  testing::check_fused_linear(
      [](const at::Tensor& w, const at::Tensor& b, const FusedLinearParams& q,
         std::vector<int64_t> in) {
        return PanelLinear::create(w, b, q, std::move(in));
      },
      x, n, bias, residual, p, what);
}

class PanelLinearTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!panel_gemm_supported()) {
      EXPECT_EQ(
          PanelLinear::create(at::randn({8, 4}), at::Tensor(), {}, {2, 4}),
          nullptr);
      GTEST_SKIP() << "this CPU has no AVX-512F";
    }
    threads_ = at::get_num_threads();
  }
  void TearDown() override { at::set_num_threads(threads_); }
  int threads_ = 1;
};

TEST_F(PanelLinearTest, EveryTileHeightAndPartialPanel) {
  at::manual_seed(0);
  FusedLinearParams none;
  for (int64_t m = 1; m <= 17; ++m) {
    for (int64_t n : {1, 16, 47, 48, 49, 100}) {
      check(at::randn({m, 37}), n, true, false, none,
            "m " + std::to_string(m) + ", n " + std::to_string(n));
    }
  }
}

TEST_F(PanelLinearTest, DepthAndRowBlocks) {
  at::manual_seed(1);
  FusedLinearParams relu;
  relu.activation = "relu";
  // k over one depth block (512): split in two and three.
  check(at::randn({20, 513}), 50, true, true, relu, "k 513");
  check(at::randn({9, 1100}), 96, true, false, relu, "k 1100");
  // m over one row block (256), and both at once.
  check(at::randn({300, 64}), 70, true, true, relu, "m 300");
  check(at::randn({2, 261, 700}), 145, false, true, relu, "m 522, k 700");
  check(at::randn({5, 1}), 3, true, false, relu, "k 1");
}

TEST_F(PanelLinearTest, TransformerShapesAtOneAndTwoThreads) {
  at::manual_seed(2);
  for (int threads : {1, 2}) {
    at::set_num_threads(threads);
    const std::string t = " at " + std::to_string(threads) + " threads";
    at::Tensor x = at::randn({1, 128, 512});
    FusedLinearParams none, relu;
    relu.activation = "relu";
    check(x, 1536, true, false, none, "qkv" + t);
    check(x, 512, true, true, none, "proj + residual" + t);
    check(x, 2048, true, false, relu, "fc1 + relu" + t);
    check(at::randn({1, 128, 2048}), 512, true, true, none,
          "fc2 + residual" + t);
    check(at::randn({3, 40}), 1000, true, false, none, "head" + t);
  }
}

TEST_F(PanelLinearTest, EveryActivationMatchesTheReference) {
  at::manual_seed(3);
  for (int threads : {1, 2}) {
    at::set_num_threads(threads);
    for (const char* a : {"none", "relu", "gelu", "gelu_tanh", "hardtanh",
                          "hardswish", "silu", "sigmoid", "hardsigmoid"}) {
      FusedLinearParams p;
      p.activation = a;
      p.min_val = -0.5;
      p.max_val = 0.25;
      for (bool residual : {false, true}) {
        check(at::randn({3, 5, 24}), 140, true, residual, p,
              std::string(a) + (residual ? " + residual" : "") + " at " +
                  std::to_string(threads) + " threads");
      }
    }
  }
}

TEST_F(PanelLinearTest, NoBiasStridedAndOneDimensionalInputs) {
  at::manual_seed(4);
  FusedLinearParams relu;
  relu.activation = "relu";
  check(at::randn({7, 33}), 9, false, false, relu, "no bias, 2-d");
  check(at::randn({33}), 9, true, true, relu, "1-d");
  at::Tensor strided = at::randn({6, 66}).narrow(1, 0, 33);
  ASSERT_FALSE(strided.is_contiguous());
  check(strided, 17, true, true, relu, "strided input");
  check(at::randn({4, 6}).t(), 5, true, false, relu, "transposed input");
}

// The residual summed in place (the output is the residual's buffer), with
// the depth in one block and split in blocks whose partial sums go through
// the output.
TEST_F(PanelLinearTest, ResidualMayBeTheOutput) {
  at::manual_seed(6);
  FusedLinearParams p;
  p.has_residual = true;
  p.activation = "relu";
  for (int64_t k : {300, 1100}) {
    at::Tensor x = at::randn({2, 33, k}), w = at::randn({100, k}) * 0.03;
    at::Tensor b = at::randn({100}), r = at::randn({2, 33, 100});
    const at::Tensor want = testing::linear_reference(x, w, b, &r, p);
    auto linear = PanelLinear::create(w, b, p, x.sizes().vec());
    ASSERT_NE(linear, nullptr);
    for (int threads : {1, 2}) {
      at::set_num_threads(threads);
      at::Tensor out = r.clone();
      linear->run(x, &out, out);
      EXPECT_TRUE(at::allclose(out, want, 1e-4, 1e-5))
          << "k " << k << ", " << threads << " threads: max |got - want| = "
          << (out - want).abs().max().item<double>();
    }
  }
}

TEST_F(PanelLinearTest, SharesPackedWeightsInAScope) {
  at::manual_seed(5);
  at::Tensor w = at::randn({60, 32}), b = at::randn({60});
  SharedWeights shared;
  SharedWeightsScope scope(&shared);
  auto a = PanelLinear::create(w, b, {}, {4, 32});
  auto c = PanelLinear::create(w, b, {}, {9, 32});
  ASSERT_NE(a, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(shared.packs(), 1u);
  at::Tensor x = at::randn({9, 32}), got = at::empty({9, 60});
  c->run(x, nullptr, got);
  EXPECT_TRUE(at::allclose(got, at::linear(x, w, b), 1e-4, 1e-5));
}

TEST_F(PanelLinearTest, RefusesWhatItCannotCompute) {
  FusedLinearParams p;
  at::Tensor w = at::randn({8, 4});
  EXPECT_NE(PanelLinear::create(w, at::randn({8}), p, {2, 4}), nullptr);
  EXPECT_EQ(PanelLinear::create(w.to(at::kDouble), at::Tensor(), p, {2, 4}),
            nullptr);
  EXPECT_EQ(PanelLinear::create(w, at::randn({7}), p, {2, 4}), nullptr);
  EXPECT_EQ(PanelLinear::create(w, at::Tensor(), p, {2, 5}), nullptr);
  EXPECT_EQ(PanelLinear::create(w, at::Tensor(), p, {0, 4}), nullptr);
  p.activation = "tanh";
  EXPECT_EQ(PanelLinear::create(w, at::Tensor(), p, {2, 4}), nullptr);
}

}  // namespace
}  // namespace fx
