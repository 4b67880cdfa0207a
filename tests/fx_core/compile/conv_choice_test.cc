// fx::choose_onednn_conv: the policy (environment variable, setter), the
// measurement made once per shape and thread count, every kernel oneDNN
// offers computing LibTorch's result, and the chosen convolution computing
// it whichever kernel won.
#include "fx_core/compile/conv_choice.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "fx_core/support/error.h"
#include "tests/testing/onednn_support.h"

namespace fx {
namespace {

FusedConvParams same_3x3() {
  FusedConvParams p;
  p.stride = {1, 1};
  p.padding = {1, 1};
  p.dilation = {1, 1};
  p.activation = "relu";
  return p;
}

// First in this file: the policy is read from the environment on first use.
TEST(ConvChoice, PolicyFromTheEnvironment) {
  ASSERT_EQ(setenv("FX_CONV_ALGORITHM", "fastest", 1), 0);
  try {
    conv_policy();
    ADD_FAILURE() << "no error for FX_CONV_ALGORITHM=fastest";
  } catch (const FxError& e) {
    EXPECT_NE(std::string(e.what()).find("FX_CONV_ALGORITHM=fastest"),
              std::string::npos)
        << e.what();
  }
  ASSERT_EQ(setenv("FX_CONV_ALGORITHM", "winograd", 1), 0);
  EXPECT_EQ(conv_policy(), ConvPolicy::kWinograd);
  ASSERT_EQ(unsetenv("FX_CONV_ALGORITHM"), 0);
  set_conv_policy(ConvPolicy::kMeasure);
  EXPECT_EQ(conv_policy(), ConvPolicy::kMeasure);
}

// Without FX_CONV_ALGORITHM the policy measures. Checked in a fresh process
// (the policy is read once per process, and the test above has read it).
TEST(ConvChoice, MeasuresByDefault) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        unsetenv("FX_CONV_ALGORITHM");
        std::_Exit(conv_policy() == ConvPolicy::kMeasure ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(ConvChoice, PolicyPicksTheAlgorithm) {
  at::Tensor w = at::randn({32, 32, 3, 3}), b = at::randn({32});
  const std::vector<int64_t> in{1, 32, 20, 20};
  set_conv_policy(ConvPolicy::kDirect);
  EXPECT_EQ(choose_onednn_conv(w, b, same_3x3(), in)->algorithm(),
            ConvAlgorithm::kDirect);
  // kWinograd runs Winograd where it applies and oneDNN implements it,
  // the direct kernel where oneDNN declines it (no AVX-512).
  set_conv_policy(ConvPolicy::kWinograd);
  EXPECT_EQ(choose_onednn_conv(w, b, same_3x3(), in)->algorithm(),
            testing::winograd_skip_reason().empty() ? ConvAlgorithm::kWinograd
                                                    : ConvAlgorithm::kDirect);
  // Where Winograd does not apply, every policy runs the direct kernel.
  FusedConvParams strided = same_3x3();
  strided.stride = {2, 2};
  EXPECT_EQ(choose_onednn_conv(w, b, strided, in)->algorithm(),
            ConvAlgorithm::kDirect);
  set_conv_policy(ConvPolicy::kMeasure);
}

// A measurement needs both algorithms: without oneDNN's Winograd there is
// nothing to choose between.
TEST(ConvChoice, MeasuresOncePerShapeAndThreadCount) {
  if (std::string why = testing::winograd_skip_reason(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  set_conv_policy(ConvPolicy::kMeasure);
  at::manual_seed(3);
  at::Tensor w = at::randn({48, 48, 3, 3}) * 0.1, b = at::randn({48});
  at::Tensor w2 = at::randn({48, 48, 3, 3}) * 0.1;
  at::Tensor x = at::randn({1, 48, 24, 24});
  const size_t before = conv_measurements();
  auto first = choose_onednn_conv(w, b, same_3x3(), x.sizes().vec());
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(conv_measurements(), before + 1);
  // Other weights of the same shape: the cached decision.
  auto second = choose_onednn_conv(w2, b, same_3x3(), x.sizes().vec());
  EXPECT_EQ(conv_measurements(), before + 1);
  EXPECT_EQ(second->algorithm(), first->algorithm());
  // Another input size is measured anew.
  choose_onednn_conv(w, b, same_3x3(), {1, 48, 12, 12});
  EXPECT_EQ(conv_measurements(), before + 2);
  // So is another thread count.
  const int threads = at::get_num_threads();
  at::set_num_threads(threads == 1 ? 2 : 1);
  choose_onednn_conv(w, b, same_3x3(), x.sizes().vec());
  EXPECT_EQ(conv_measurements(), before + 3);
  at::set_num_threads(threads);
  // Whichever won computes LibTorch's result.
  at::Tensor out = at::empty(
      first->output_sizes(),
      at::TensorOptions().memory_format(at::MemoryFormat::ChannelsLast));
  first->run(x, nullptr, out);
  at::Tensor want = at::relu(at::conv2d(x, w, b, 1, 1));
  EXPECT_TRUE(at::allclose(out, want, 1e-4, 1e-5))
      << (out - want).abs().max().item<double>();
}

// Every kernel implementations() lists builds and computes LibTorch's
// result: 1x1 with a residual summed in place, depthwise, a 3x3 stem on
// three channels, and each Winograd kernel of a 3x3 layer at batch 1. (Picking
// a kernel other than oneDNN's first walks its implementation list; that walk
// once read a freed op descriptor and gave wrong numbers or hung.)
TEST(ConvChoice, EveryListedKernelComputesLibTorchsResult) {
  at::manual_seed(5);
  struct Case {
    const char* what;
    at::Tensor w, x;
    int64_t stride, padding, groups;
    bool residual;
    ConvAlgorithm algorithm = ConvAlgorithm::kDirect;
  };
  for (const Case& c : std::vector<Case>{
           {"1x1 + residual", at::randn({24, 72, 1, 1}) * 0.1,
            at::randn({1, 72, 14, 14}), 1, 0, 1, true},
           {"depthwise 3x3", at::randn({48, 1, 3, 3}) * 0.3,
            at::randn({1, 48, 20, 20}), 1, 1, 48, false},
           {"stem 3x3 / 2", at::randn({16, 3, 3, 3}) * 0.3,
            at::randn({1, 3, 32, 32}), 2, 1, 1, false},
           {"Winograd 3x3", at::randn({64, 64, 3, 3}) * 0.05,
            at::randn({1, 64, 56, 56}), 1, 1, 1, false,
            ConvAlgorithm::kWinograd},
       }) {
    FusedConvParams p;
    p.stride = {c.stride, c.stride};
    p.padding = {c.padding, c.padding};
    p.dilation = {1, 1};
    p.groups = c.groups;
    p.has_residual = c.residual;
    p.activation = "relu";
    at::Tensor b = at::randn({c.w.size(0)});
    const std::vector<int64_t> in = c.x.sizes().vec();
    const std::vector<std::string> names =
        OnednnConv::implementations(c.w, b, p, in, c.algorithm);
    // oneDNN 2.6 has Winograd kernels on AVX-512 CPUs only.
    if (c.algorithm == ConvAlgorithm::kWinograd &&
        !__builtin_cpu_supports("avx512f")) {
      continue;
    }
    ASSERT_FALSE(names.empty()) << c.what;
    EXPECT_EQ(OnednnConv::create(c.w, b, p, in, c.algorithm)->implementation(),
              names[0])
        << c.what;
    at::Tensor conv = at::conv2d(c.x, c.w, b, c.stride, c.padding, 1, c.groups);
    at::Tensor residual =
        at::randn_like(conv).contiguous(at::MemoryFormat::ChannelsLast);
    at::Tensor want = at::relu(c.residual ? conv + residual : conv);
    for (const std::string& name : names) {
      auto kernel = OnednnConv::create(c.w, b, p, in, c.algorithm, name);
      ASSERT_NE(kernel, nullptr) << c.what << ": " << name;
      EXPECT_EQ(kernel->implementation(), name);
      at::Tensor out = residual.clone();  // summed in place
      kernel->run(c.x, c.residual ? &out : nullptr, out);
      // Winograd's transforms round a little more than a direct sum.
      const double atol = c.algorithm == ConvAlgorithm::kWinograd ? 1e-4 : 1e-5;
      EXPECT_TRUE(at::allclose(out, want, 1e-4, atol))
          << c.what << ": " << name << " differs by "
          << (out - want).abs().max().item<double>();
    }
    EXPECT_EQ(
        OnednnConv::create(c.w, b, p, in, c.algorithm, "no_such_kernel:any"),
        nullptr);
  }
}

// Convolutions Winograd does not apply to are measured too when oneDNN
// offers more than one kernel for them: the decision is cached per shape,
// and the chosen kernel computes LibTorch's result.
TEST(ConvChoice, MeasuresTheDirectKernelsOfAnyConvolution) {
  set_conv_policy(ConvPolicy::kMeasure);
  at::manual_seed(7);
  FusedConvParams p;
  p.stride = {1, 1};
  p.padding = {0, 0};
  p.dilation = {1, 1};
  p.activation = "relu";
  at::Tensor w = at::randn({16, 32, 1, 1}) * 0.2, b = at::randn({16});
  at::Tensor x = at::randn({1, 32, 28, 28});
  const std::vector<int64_t> in = x.sizes().vec();
  const size_t kernels = OnednnConv::implementations(w, b, p, in).size();
  const size_t before = conv_measurements();
  auto chosen = choose_onednn_conv(w, b, p, in);
  ASSERT_NE(chosen, nullptr);
  EXPECT_EQ(conv_measurements(), before + (kernels > 1 ? 1 : 0));
  choose_onednn_conv(w, b, p, in);
  EXPECT_EQ(conv_measurements(), before + (kernels > 1 ? 1 : 0));
  at::Tensor out = at::empty(
      chosen->output_sizes(),
      at::TensorOptions().memory_format(at::MemoryFormat::ChannelsLast));
  chosen->run(x, nullptr, out);
  at::Tensor want = at::relu(at::conv2d(x, w, b));
  EXPECT_TRUE(at::allclose(out, want, 1e-4, 1e-5))
      << chosen->implementation() << " differs by "
      << (out - want).abs().max().item<double>();
}

}  // namespace
}  // namespace fx
