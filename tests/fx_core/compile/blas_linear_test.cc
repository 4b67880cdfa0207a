// fx::BlasLinear against fx_inference.linear's reference kernel (ATen's
// linear, add and activation, through PyTorch's dispatcher) at the suite
// transformer's shapes and small ones, for every activation, with and
// without bias and residual, on strided and 1-d inputs, at 1 and 2 threads;
// the BLAS's own thread count is left as it was (OneBlasThread); create()
// refuses what it cannot compute.
#include "fx_core/compile/blas_linear.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "fx_core/runtime/parallel.h"

namespace fx {
namespace {

at::Tensor reference(const at::Tensor& x, const at::Tensor& w,
                     const at::Tensor& b, const at::Tensor* residual,
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

void check(const at::Tensor& x, int64_t n, bool bias, bool residual,
           FusedLinearParams p, const std::string& what) {
  const int64_t k = x.size(-1);
  at::Tensor w = at::randn({n, k}) * (1.0 / std::sqrt(double(k)));
  at::Tensor b = bias ? at::randn({n}) * 0.1 : at::Tensor();
  std::vector<int64_t> out_sizes = x.sizes().vec();
  out_sizes.back() = n;
  at::Tensor r = at::randn(out_sizes);
  p.has_residual = residual;
  auto linear = BlasLinear::create(w, b, p, x.sizes().vec());
  ASSERT_NE(linear, nullptr) << what;
  ASSERT_EQ(linear->output_sizes(), out_sizes) << what;
  at::Tensor got = at::empty(out_sizes);
  linear->run(x, residual ? &r : nullptr, got);
  at::Tensor want = reference(x, w, b, residual ? &r : nullptr, p);
  EXPECT_TRUE(at::allclose(got, want, 1e-4, 1e-5))
      << what
      << ": max |got - want| = " << (got - want).abs().max().item<double>();
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
