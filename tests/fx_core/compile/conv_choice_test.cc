// fx::choose_onednn_conv: the policy (environment variable, setter), the
// measurement made once per shape and thread count, and the chosen
// convolution computing LibTorch's result whichever algorithm won.
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

}  // namespace
}  // namespace fx
