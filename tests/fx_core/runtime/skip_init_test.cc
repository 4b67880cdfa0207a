// fx::SkipInitGuard: LibTorch's random initialisers leave tensors unfilled
// while a guard lives on the thread, and only then; constant fills and
// other threads are untouched; module constructors run (shapes intact).
#include "fx_core/runtime/skip_init.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn.h>

#include <thread>

namespace fx {
namespace {

TEST(SkipInit, RandomInitialisersLeaveTensorsUnfilled) {
  at::Tensor u = at::zeros({1000}), n = at::zeros({1000});
  {
    SkipInitGuard guard;
    ASSERT_TRUE(guard.active());
    u.uniform_(-1, 1);
    n.normal_(0, 1);
    torch::nn::init::kaiming_uniform_(u.view({10, 100}));
  }
  EXPECT_TRUE(at::equal(u, at::zeros({1000})));
  EXPECT_TRUE(at::equal(n, at::zeros({1000})));
  u.uniform_(-1, 1);  // after the guard: random again
  EXPECT_GT(u.abs().sum().item<double>(), 100);
}

TEST(SkipInit, ConstantFillsAndShapesStay) {
  SkipInitGuard guard;
  at::Tensor t = at::zeros({3});
  t.fill_(2);
  EXPECT_TRUE(at::equal(t, at::full({3}, 2.0)));
  torch::nn::BatchNorm2d bn(4);
  EXPECT_TRUE(at::equal(bn->weight, at::ones({4})));
  EXPECT_TRUE(at::equal(bn->running_var, at::ones({4})));
  torch::nn::Conv2d conv(torch::nn::Conv2dOptions(3, 8, 3));
  EXPECT_EQ(conv->weight.sizes(), (std::vector<int64_t>{8, 3, 3, 3}));
}

TEST(SkipInit, OtherThreadsStillInitialise) {
  SkipInitGuard guard;
  double sum = 0;
  std::thread other([&sum] {
    at::Tensor t = at::zeros({1000});
    t.uniform_(-1, 1);
    sum = t.abs().sum().item<double>();
  });
  other.join();
  EXPECT_GT(sum, 100);
}

}  // namespace
}  // namespace fx
