// fx::BlasLinear against fx_inference.linear's reference kernel (ATen's
// linear, add and activation, through PyTorch's dispatcher) at the suite
// transformer's shapes and small ones, for every activation, with and
// without bias and residual, on strided and 1-d inputs, at 1 and 2 threads;
// the BLAS's own thread count is left as it was (OneBlasThread); create()
// refuses what it cannot compute.
#include "fx_core/compile/blas_linear.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/runtime/parallel.h"
#include "tests/fx_core/compile/fused_linear_check.h"

namespace fx {
namespace {

void check(const at::Tensor& x, int64_t n, bool bias, bool residual,
           const FusedLinearParams& p, const std::string& what) {
  testing::check_fused_linear(
      [](const at::Tensor& w, const at::Tensor& b, const FusedLinearParams& q,
         std::vector<int64_t> in) {
        return BlasLinear::create(w, b, q, std::move(in));
      },
      x, n, bias, residual, p, what);
}

class BlasLinearTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!BlasLinear::available()) {
      GTEST_SKIP() << "the BLAS LibTorch calls is not OpenBLAS";
    }
    threads_ = at::get_num_threads();
  }
  void TearDown() override { at::set_num_threads(threads_); }
  int threads_ = 1;
};

TEST_F(BlasLinearTest, TransformerShapesMatchTheReference) {
  at::manual_seed(1);
  for (int threads : {1, 2}) {
    at::set_num_threads(threads);
    const std::string t = " at " + std::to_string(threads) + " threads";
    at::Tensor x = at::randn({1, 128, 512});
    FusedLinearParams none, gelu;
    gelu.activation = "gelu";
    check(x, 1536, true, false, none, "qkv" + t);
    check(x, 512, true, true, none, "out projection + residual" + t);
    check(x, 2048, true, false, gelu, "ff1 + gelu" + t);
    check(at::randn({8, 16, 2048}), 512, true, true, none, "ff2, batch 8" + t);
  }
}

TEST_F(BlasLinearTest, EveryActivationMatchesTheReference) {
  at::manual_seed(2);
  at::set_num_threads(2);
  for (const char* a : {"none", "relu", "hardtanh", "hardswish", "silu",
                        "sigmoid", "hardsigmoid", "gelu", "gelu_tanh"}) {
    FusedLinearParams p;
    p.activation = a;
    p.min_val = -0.5;
    p.max_val = 0.5;
    for (bool bias : {true, false}) {
      for (bool residual : {true, false}) {
        check(at::randn({5, 40}), 37, bias, residual, p,
              std::string(a) + (bias ? " bias" : "") +
                  (residual ? " residual" : ""));
      }
    }
  }
}

TEST_F(BlasLinearTest, StridedOneDimensionalAndNarrowOutputs) {
  at::manual_seed(3);
  at::set_num_threads(2);
  FusedLinearParams relu;
  relu.activation = "relu";
  check(at::randn({6, 48}).narrow(1, 0, 24), 64, true, false, relu, "strided");
  check(at::randn({24}), 64, true, true, relu, "1-d");
  check(at::randn({3, 24}), 5, false, false, relu, "fewer columns than a part");
}

TEST_F(BlasLinearTest, LeavesTheBlasThreadCountAsItWas) {
  using GetThreads = int (*)();
  auto get = reinterpret_cast<GetThreads>(
      dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  ASSERT_NE(get, nullptr);
  const int before = get();
  at::set_num_threads(2);
  FusedLinearParams p;
  check(at::randn({64, 32}), 64, true, false, p, "2 threads");
  EXPECT_EQ(get(), before);
}

TEST_F(BlasLinearTest, OneBlasThreadHoldsThePoolAtOneThreadInScope) {
  using GetThreads = int (*)();
  using SetThreads = void (*)(int);
  auto get = reinterpret_cast<GetThreads>(
      dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  auto set = reinterpret_cast<SetThreads>(
      dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  ASSERT_TRUE(get != nullptr && set != nullptr);
  const int before = get();
  set(2);
  {
    OneBlasThread one;
    EXPECT_EQ(get(), 1);
    {
      OneBlasThread nested;
      EXPECT_EQ(get(), 1);
    }
    EXPECT_EQ(get(), 1);
  }
  EXPECT_EQ(get(), 2);
  set(before);
}

TEST_F(BlasLinearTest, RefusesWhatItCannotComputeAlike) {
  FusedLinearParams p;
  at::Tensor w = at::randn({8, 4});
  EXPECT_EQ(BlasLinear::create(w.to(at::kDouble), at::Tensor(), p, {2, 4}),
            nullptr);
  EXPECT_EQ(BlasLinear::create(w, at::randn({7}), p, {2, 4}), nullptr);
  EXPECT_EQ(BlasLinear::create(w, at::Tensor(), p, {2, 5}), nullptr);
  EXPECT_EQ(BlasLinear::create(w, at::Tensor(), p, {0, 4}), nullptr);
  EXPECT_EQ(BlasLinear::create(w, at::Tensor(), p, {}), nullptr);
  p.activation = "softplus";
  EXPECT_EQ(BlasLinear::create(w, at::Tensor(), p, {2, 4}), nullptr);
}

}  // namespace
}  // namespace fx
