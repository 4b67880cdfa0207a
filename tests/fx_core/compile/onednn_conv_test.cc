// fx::OnednnConv against LibTorch's own convolution (at::conv2d, then the
// residual add and the activation): both algorithms, the residual summed in
// place (the residual is the destination) and copied first (any other
// tensor, any layout), inputs in every layout (an NCHW one reordered into a
// buffer the convolution keeps), the algorithm refusing what it cannot
// run, and a 1x1 convolution with a depthwise 3x3 one fused after it.
#include "fx_core/compile/onednn_conv.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/testing/onednn_support.h"

namespace fx {
namespace {

constexpr auto kNhwc = at::MemoryFormat::ChannelsLast;

FusedConvParams params(int64_t stride, int64_t padding, bool residual,
                       const char* activation) {
  FusedConvParams p;
  p.stride = {stride, stride};
  p.padding = {padding, padding};
  p.dilation = {1, 1};
  p.has_residual = residual;
  p.activation = activation;
  return p;
}

at::Tensor reference(const at::Tensor& x, const at::Tensor& w,
                     const at::Tensor& b, const FusedConvParams& p,
                     const at::Tensor* residual) {
  at::Tensor y = at::conv2d(x, w, b, p.stride, p.padding, p.dilation);
  if (residual != nullptr) y = y + *residual;
  return p.activation == "relu" ? at::relu(y) : y;
}

void expect_close(const at::Tensor& got, const at::Tensor& want) {
  const double scale = want.abs().max().item<double>();
  EXPECT_TRUE(at::allclose(got, want, 1e-4, 1e-5 * std::max(1.0, scale)))
      << "max |got - want| = " << (got - want).abs().max().item<double>()
      << ", max |want| = " << scale;
}

at::Tensor nhwc_empty(const std::vector<int64_t>& sizes) {
  return at::empty(sizes, at::TensorOptions().memory_format(kNhwc));
}

TEST(OnednnConv, WinogradMatchesLibTorch) {
  if (std::string why = testing::winograd_skip_reason(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  at::manual_seed(0);
  for (int64_t c : {16, 64}) {
    at::Tensor x = at::randn({1, c, 28, 28});
    at::Tensor w = at::randn({c, c, 3, 3}) * 0.1, b = at::randn({c});
    FusedConvParams p = params(1, 1, false, "relu");
    ASSERT_TRUE(OnednnConv::winograd_applies(w, p));
    auto conv =
        OnednnConv::create(w, b, p, x.sizes().vec(), ConvAlgorithm::kWinograd);
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(conv->algorithm(), ConvAlgorithm::kWinograd);
    EXPECT_NE(conv->implementation().find("wino"), std::string::npos)
        << conv->implementation();
    at::Tensor out = nhwc_empty(conv->output_sizes());
    conv->run(x, nullptr, out);  // an NCHW input: copied to NHWC first
    expect_close(out, reference(x, w, b, p, nullptr));
    conv->run(x.contiguous(kNhwc), nullptr, out);
    expect_close(out, reference(x, w, b, p, nullptr));
  }
}

// Evicting the weights (what conv_choice does before each timed run) only
// moves cache lines: every later run computes bitwise the same result.
TEST(OnednnConv, EvictedWeightsComputeTheSame) {
  at::manual_seed(1);
  at::Tensor x = at::randn({1, 32, 14, 14}).contiguous(kNhwc);
  at::Tensor w = at::randn({32, 32, 3, 3}) * 0.1, b = at::randn({32});
  const FusedConvParams p = params(1, 1, false, "relu");
  std::vector<ConvAlgorithm> algorithms{ConvAlgorithm::kDirect};
  if (testing::winograd_skip_reason().empty()) {
    algorithms.push_back(ConvAlgorithm::kWinograd);
  }
  for (ConvAlgorithm a : algorithms) {
    auto conv = OnednnConv::create(w, b, p, x.sizes().vec(), a);
    ASSERT_NE(conv, nullptr);
    at::Tensor before = nhwc_empty(conv->output_sizes());
    at::Tensor after = nhwc_empty(conv->output_sizes());
    conv->run(x, nullptr, before);
    conv->evict_weights();
    conv->run(x, nullptr, after);
    EXPECT_TRUE(at::equal(before, after));
    expect_close(after, reference(x, w, b, p, nullptr));
  }
}

TEST(OnednnConv, WinogradRefusesWhatItCannotRun) {
  at::Tensor w3 = at::randn({8, 8, 3, 3}), w1 = at::randn({8, 8, 1, 1});
  at::Tensor b = at::randn({8});
  const std::vector<int64_t> in{1, 8, 12, 12};
  FusedConvParams strided = params(2, 1, false, "none");
  FusedConvParams residual = params(1, 1, true, "none");
  FusedConvParams grouped = params(1, 1, false, "none");
  grouped.groups = 2;
  at::Tensor wg = at::randn({8, 4, 3, 3});
  for (auto [w, p] :
       {std::pair{w3, strided}, std::pair{w3, residual},
        std::pair{w1, params(1, 0, false, "none")}, std::pair{wg, grouped}}) {
    EXPECT_FALSE(OnednnConv::winograd_applies(w, p));
    EXPECT_EQ(OnednnConv::create(w, b, p, in, ConvAlgorithm::kWinograd),
              nullptr);
    auto direct = OnednnConv::create(w, b, p, in);
    ASSERT_NE(direct, nullptr);
    EXPECT_EQ(direct->algorithm(), ConvAlgorithm::kDirect);
  }
}

// The residual as a sum post-op: copied into the destination first, from
// NHWC and NCHW tensors alike, or summed in place when it is the
// destination.
TEST(OnednnConv, ResidualCopiedOrSummedInPlace) {
  at::manual_seed(1);
  for (int64_t k : {1, 3}) {
    at::Tensor x = at::randn({1, 32, 14, 14}).contiguous(kNhwc);
    at::Tensor w = at::randn({64, 32, k, k}) * 0.1, b = at::randn({64});
    FusedConvParams p = params(1, k / 2, true, "relu");
    auto conv = OnednnConv::create(w, b, p, x.sizes().vec());
    ASSERT_NE(conv, nullptr);
    at::Tensor r = at::randn({1, 64, 14, 14});
    const at::Tensor want = reference(x, w, b, p, &r);
    for (const at::Tensor& residual : {r, r.contiguous(kNhwc)}) {
      at::Tensor out = nhwc_empty(conv->output_sizes());
      conv->run(x, &residual, out);
      expect_close(out, want);
      expect_close(residual, r);  // not written
    }
    at::Tensor in_place = r.contiguous(kNhwc).clone(kNhwc);
    conv->run(x, &in_place, in_place);
    expect_close(in_place, want);
  }
}

TEST(OnednnConv, DirectWithoutBiasMatchesLibTorch) {
  at::manual_seed(2);
  at::Tensor x = at::randn({1, 3, 33, 31});
  at::Tensor w = at::randn({16, 3, 7, 7}) * 0.1;
  FusedConvParams p = params(2, 3, false, "none");
  auto conv = OnednnConv::create(w, at::Tensor(), p, x.sizes().vec());
  ASSERT_NE(conv, nullptr);
  at::Tensor out = nhwc_empty(conv->output_sizes());
  conv->run(x, nullptr, out);
  expect_close(out, reference(x, w, at::Tensor(), p, nullptr));
}

// A model's input image arrives NCHW: oneDNN reorders it into a buffer
// made on first use. Each run must read its own input (the buffer is
// refilled), and NHWC and strided inputs still work.
TEST(OnednnConv, NchwInputsReorderedEveryRun) {
  at::manual_seed(3);
  at::Tensor w = at::randn({32, 3, 3, 3}) * 0.1, b = at::randn({32});
  FusedConvParams p = params(2, 1, true, "relu");
  const std::vector<int64_t> in{1, 3, 40, 36};
  auto conv = OnednnConv::create(w, b, p, in);
  ASSERT_NE(conv, nullptr);
  for (int run = 0; run < 3; ++run) {
    at::Tensor x = at::randn(in);
    at::Tensor r = at::randn(conv->output_sizes());
    at::Tensor out = nhwc_empty(conv->output_sizes());
    conv->run(x, &r, out);
    expect_close(out, reference(x, w, b, p, &r));
    conv->run(x.contiguous(kNhwc), &r, out);
    expect_close(out, reference(x, w, b, p, &r));
    at::Tensor wide = at::randn({1, 3, 40, 72});
    at::Tensor strided = wide.slice(3, 0, 72, 2);  // neither layout
    conv->run(strided, &r, out);
    expect_close(out, reference(strided, w, b, p, &r));
  }
  EXPECT_EQ(conv->input_sizes(), in);
}

at::Tensor activate(const at::Tensor& y, const std::string& activation) {
  if (activation == "relu") return at::relu(y);
  if (activation == "silu") return at::silu(y);
  if (activation == "hardtanh") return at::hardtanh(y, 0.0, 6.0);
  return y;
}

// A 1x1 convolution, then the depthwise 3x3 one of `tail`, as LibTorch
// computes them one after the other.
at::Tensor depthwise_reference(const at::Tensor& x, const at::Tensor& w,
                               const at::Tensor& b, const std::string& act,
                               const DepthwiseTail& tail) {
  at::Tensor y = activate(at::conv2d(x, w, b), act);
  y = at::conv2d(y, tail.weight, tail.bias, tail.stride, 1, 1, w.size(0));
  return activate(y, tail.activation);
}

DepthwiseTail depthwise_tail(int64_t channels, int64_t stride,
                             const std::string& activation, bool bias) {
  DepthwiseTail tail;
  tail.weight = at::randn({channels, 1, 3, 3}) * 0.3;
  if (bias) tail.bias = at::randn({channels});
  tail.stride = stride;
  tail.activation = activation;
  tail.min_val = 0.0;
  tail.max_val = 6.0;
  return tail;
}

// oneDNN 2.6 has a kernel of its own for the pair on AVX-512 CPUs at
// these sizes (jit_1x1 with the depthwise convolution in its loop); for
// smaller ones it offers only its reference kernel, which
// create_with_depthwise refuses.
TEST(OnednnConv, DepthwiseTailMatchesLibTorch) {
  at::manual_seed(4);
  const std::vector<int64_t> in{4, 16, 56, 56};
  int fused = 0;
  for (const char* act : {"relu", "silu", "hardtanh"}) {
    for (int64_t stride : {1, 2}) {
      at::Tensor x = at::randn(in);
      at::Tensor w = at::randn({48, 16, 1, 1}) * 0.2, b = at::randn({48});
      FusedConvParams p = params(1, 0, false, act);
      p.min_val = 0.0;
      p.max_val = 6.0;
      const DepthwiseTail tail = depthwise_tail(48, stride, act, stride == 2);
      auto conv = OnednnConv::create_with_depthwise(w, b, p, in, tail);
      if (conv == nullptr) continue;
      ++fused;
      EXPECT_EQ(conv->implementation().rfind("ref", 0), std::string::npos);
      const at::Tensor want = depthwise_reference(x, w, b, act, tail);
      EXPECT_EQ(conv->output_sizes(), want.sizes().vec());
      at::Tensor out = nhwc_empty(conv->output_sizes());
      conv->run(x, nullptr, out);
      expect_close(out, want);
      conv->evict_weights();
      conv->run(x.contiguous(kNhwc), nullptr, out);
      expect_close(out, want);
    }
  }
  const std::string why = testing::depthwise_fusion_skip_reason();
  if (!why.empty()) {
    EXPECT_EQ(fused, 0) << "fused with oneDNN's reference kernel";
    GTEST_SKIP() << why;
  }
  EXPECT_EQ(fused, 6);
}

TEST(OnednnConv, DepthwiseTailRefusesWhatItCannotFuse) {
  at::manual_seed(5);
  const std::vector<int64_t> in{4, 16, 56, 56};
  at::Tensor w = at::randn({48, 16, 1, 1}), b = at::randn({48});
  const FusedConvParams p = params(1, 0, false, "relu");
  const DepthwiseTail tail = depthwise_tail(48, 2, "relu", true);
  DepthwiseTail other_channels = depthwise_tail(32, 2, "relu", true);
  DepthwiseTail stride3 = depthwise_tail(48, 3, "relu", true);
  DepthwiseTail unknown = depthwise_tail(48, 2, "mish", true);
  for (const DepthwiseTail* t : {&other_channels, &stride3, &unknown}) {
    EXPECT_EQ(OnednnConv::create_with_depthwise(w, b, p, in, *t), nullptr);
  }
  at::Tensor w3 = at::randn({48, 16, 3, 3});
  FusedConvParams residual = params(1, 0, true, "relu");
  FusedConvParams strided = params(2, 0, false, "relu");
  EXPECT_EQ(OnednnConv::create_with_depthwise(
                w3, b, params(1, 1, false, "relu"), in, tail),
            nullptr);
  EXPECT_EQ(OnednnConv::create_with_depthwise(w, b, residual, in, tail),
            nullptr);
  EXPECT_EQ(OnednnConv::create_with_depthwise(w, b, strided, in, tail),
            nullptr);
  // Where oneDNN offers only its reference kernel (two primitives in turn).
  EXPECT_EQ(OnednnConv::create_with_depthwise(w, b, p, {1, 16, 16, 16}, tail),
            nullptr);
}

}  // namespace
}  // namespace fx
