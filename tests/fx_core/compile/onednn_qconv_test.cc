// fx::OnednnQConv against LibTorch's own quantized convolution on its onednn
// engine (quantized::conv2d_prepack, then quantized::conv2d.new or
// conv2d_relu.new, what torch.ao.nn.quantized's Conv2d and ConvReLU2d run):
// the shapes of mobilenet_v2 and resnet (stem, depthwise, pointwise, strided,
// dilated, batch of 2), per-channel and per-tensor weights, with and
// without bias, zero and non-zero zero points, checked bit for bit; a clamp
// against the quantized convolution followed by LibTorch's quantized
// hardtanh; and what create() refuses.
#include "fx_core/compile/onednn_qconv.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fx {
namespace {

constexpr auto kNhwc = at::MemoryFormat::ChannelsLast;

struct Case {
  std::vector<int64_t> input;  // N, C, H, W
  int64_t out_channels, kernel, stride, padding, dilation, groups;
  bool per_channel, bias, relu;
  int64_t input_zero_point, output_zero_point;
};

at::Tensor quantized_weight(const Case& c) {
  at::Tensor w =
      at::randn({c.out_channels, c.input[1] / c.groups, c.kernel, c.kernel}) *
      0.2;
  if (!c.per_channel) return at::quantize_per_tensor(w, 0.004, 0, at::kQInt8);
  at::Tensor scales = w.abs().amax({1, 2, 3}).to(at::kDouble) / 127.0;
  at::Tensor zero_points = at::zeros({c.out_channels}, at::kLong);
  return at::quantize_per_channel(w, scales, zero_points, 0, at::kQInt8);
}

QuantizedConvParams params_of(const Case& c, const at::Tensor& qx) {
  QuantizedConvParams p;
  p.stride = {c.stride, c.stride};
  p.padding = {c.padding, c.padding};
  p.dilation = {c.dilation, c.dilation};
  p.groups = c.groups;
  p.input_scale = qx.q_scale();
  p.input_zero_point = qx.q_zero_point();
  // A scale drawn per case, so that many multipliers are tried.
  p.output_scale = 0.02 + 0.1 * at::rand({1}).item<double>();
  p.output_zero_point = c.output_zero_point;
  p.relu = c.relu;
  return p;
}

// LibTorch's quantized convolution on its onednn engine.
class LibTorchQConv {
 public:
  LibTorchQConv(const at::Tensor& qw, const at::Tensor& bias,
                const QuantizedConvParams& p) {
    at::globalContext().setQEngine(at::QEngine::ONEDNN);
    auto& dispatcher = c10::Dispatcher::singleton();
    std::vector<c10::IValue> stack{
        qw,         bias.defined() ? c10::IValue(bias) : c10::IValue(),
        p.stride,   p.padding,
        p.dilation, p.groups};
    dispatcher.findSchemaOrThrow("quantized::conv2d_prepack", "")
        .callBoxed(&stack);
    packed_ = stack.at(0);
    run_.emplace(dispatcher.findSchemaOrThrow(
        p.relu ? "quantized::conv2d_relu" : "quantized::conv2d", "new"));
    scale_ = p.output_scale;
    zero_point_ = p.output_zero_point;
  }
  at::Tensor operator()(const at::Tensor& qx) const {
    std::vector<c10::IValue> stack{qx, packed_, scale_, zero_point_};
    run_->callBoxed(&stack);
    return stack.at(0).toTensor();
  }

 private:
  c10::IValue packed_;
  std::optional<c10::OperatorHandle> run_;
  double scale_ = 1.0;
  int64_t zero_point_ = 0;
};

at::Tensor quantized_input(const Case& c) {
  at::Tensor x = at::randn(c.input).contiguous(kNhwc);
  const double scale = 0.01 + 0.05 * at::rand({1}).item<double>();
  return at::quantize_per_tensor(x, scale, c.input_zero_point, at::kQUInt8);
}

at::Tensor run_ours(OnednnQConv& conv, const at::Tensor& qx,
                    const QuantizedConvParams& p) {
  at::Tensor out = at::_empty_affine_quantized(
      conv.output_sizes(), at::TensorOptions().dtype(at::kQUInt8),
      p.output_scale, p.output_zero_point, kNhwc);
  conv.run(qx, out);
  return out;
}

// The number of elements that differ, and the largest difference.
std::string differences(const at::Tensor& got, const at::Tensor& want) {
  at::Tensor d =
      (got.int_repr().to(at::kInt) - want.int_repr().to(at::kInt)).abs();
  return std::to_string(d.ne(0).sum().item<int64_t>()) + " of " +
         std::to_string(d.numel()) + " differ, by up to " +
         std::to_string(d.max().item<int>());
}

void expect_equal_to_libtorch(const Case& c, uint64_t seed) {
  at::manual_seed(seed);
  const at::Tensor qw = quantized_weight(c);
  const at::Tensor bias =
      c.bias ? at::randn({c.out_channels}) * 0.5 : at::Tensor();
  const at::Tensor qx = quantized_input(c);
  const QuantizedConvParams p = params_of(c, qx);
  std::unique_ptr<OnednnQConv> conv = OnednnQConv::create(qw, bias, p, c.input);
  ASSERT_NE(conv, nullptr);
  const at::Tensor want = LibTorchQConv(qw, bias, p)(qx);
  const at::Tensor got = run_ours(*conv, qx, p);
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_TRUE(at::equal(got.int_repr(), want.int_repr()))
      << differences(got, want) << " (" << conv->implementation() << ")";
}

TEST(OnednnQConv, EqualsLibTorchOnMobilenetShapes) {
  // input, out, kernel, stride, padding, dilation, groups, per_channel,
  // bias, relu, input zp, output zp
  const std::vector<Case> cases = {
      {{1, 3, 32, 32}, 32, 3, 2, 1, 1, 1, true, true, true, 128, 0},   // stem
      {{1, 32, 16, 16}, 32, 3, 1, 1, 1, 32, true, true, true, 0, 0},   // dw
      {{1, 96, 16, 16}, 96, 3, 2, 1, 1, 96, true, true, false, 7, 3},  // dw/2
      {{1, 32, 16, 16}, 16, 1, 1, 0, 1, 1, true, true, false, 0, 64},  // 1x1
      {{1, 16, 8, 8}, 96, 1, 1, 0, 1, 1, true, false, true, 100, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("input channels " + std::to_string(c.input[1]) + ", groups " +
                 std::to_string(c.groups));
    for (uint64_t seed = 0; seed < 4; ++seed) expect_equal_to_libtorch(c, seed);
  }
}

TEST(OnednnQConv, EqualsLibTorchOnOtherShapes) {
  const std::vector<Case> cases = {
      // per-tensor weights, no bias
      {{1, 8, 12, 12}, 16, 3, 1, 1, 1, 1, false, false, false, 128, 128},
      // dilation 2, no padding, batch of 2, grouped (not depthwise)
      {{2, 16, 13, 11}, 32, 3, 1, 0, 2, 4, true, true, true, 20, 0},
      // resnet's 7x7 stem
      {{1, 3, 40, 40}, 64, 7, 2, 3, 1, 1, true, true, true, 60, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("kernel " + std::to_string(c.kernel) + ", groups " +
                 std::to_string(c.groups));
    for (uint64_t seed = 0; seed < 4; ++seed) expect_equal_to_libtorch(c, seed);
  }
}

// oneDNN 2.6.3's AMX int8 1x1 kernel corrupts the heap when zero points are
// set (this shape, on an Intel CPU with AMX: LibTorch's own quantized
// convolution aborts on it there), so with zero points the convolution takes
// oneDNN's next kernel. Checked against the float convolution of the
// dequantized operands, quantized: LibTorch's kernel cannot be the reference
// where it crashes. Two runs, so that a corrupted heap shows.
TEST(OnednnQConv, ZeroPointsNeverTakeAmxKernels) {
  at::manual_seed(5);
  const Case c{{1, 192, 6, 6}, 64, 1, 1, 0, 1, 1, true, true, false, 132, 114};
  const at::Tensor qw = quantized_weight(c), bias = at::randn({64}) * 0.5;
  const at::Tensor qx = quantized_input(c);
  const QuantizedConvParams p = params_of(c, qx);
  auto conv = OnednnQConv::create(qw, bias, p, c.input);
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->implementation().find("amx"), std::string::npos)
      << conv->implementation();
  const at::Tensor want = at::quantize_per_tensor(
      at::conv2d(qx.dequantize(), qw.dequantize(), bias), p.output_scale,
      p.output_zero_point, at::kQUInt8);
  for (int run = 0; run < 2; ++run) {
    const at::Tensor got = run_ours(*conv, qx, p);
    const at::Tensor d =
        (got.int_repr().to(at::kInt) - want.int_repr().to(at::kInt)).abs();
    EXPECT_LE(d.max().item<int>(), 1) << differences(got, want);
  }
}

TEST(OnednnQConv, ClampEqualsConvolutionThenQuantizedHardtanh) {
  at::manual_seed(0);
  const Case c{{1, 24, 10, 10}, 24, 3, 1, 1, 1, 24, true, true, false, 9, 40};
  const at::Tensor qw = quantized_weight(c), bias = at::randn({24});
  const at::Tensor qx = quantized_input(c);
  QuantizedConvParams p = params_of(c, qx);
  const at::Tensor conv_only = LibTorchQConv(qw, bias, p)(qx);
  for (auto [lo, hi] : {std::pair{0.0, 6.0}, std::pair{-0.5, 0.75}}) {
    p.clamp = std::pair{lo, hi};
    auto conv = OnednnQConv::create(qw, bias, p, c.input);
    ASSERT_NE(conv, nullptr);
    const at::Tensor want = at::hardtanh(conv_only, lo, hi);
    const at::Tensor got = run_ours(*conv, qx, p);
    EXPECT_TRUE(at::equal(got.int_repr(), want.int_repr()))
        << "hardtanh(" << lo << ", " << hi << "): " << differences(got, want);
  }
}

TEST(OnednnQConv, WithParamsEqualsLibTorchForTheNewParams) {
  // The plan builds a convolution once at bind, again with a fused clamp,
  // and again when an input's qparams differ: each rebuilt one (its
  // weights packed once, shared when the layout allows) computes what
  // LibTorch computes for the new parameters. The input zero points go
  // from non-zero to zero and back (oneDNN may want the weights in another
  // layout when the input has a zero point: its compensation).
  at::manual_seed(0);
  const Case c{{1, 16, 12, 12}, 32, 3, 1, 1, 1, 1, true, true, false, 5, 10};
  const at::Tensor qw = quantized_weight(c), bias = at::randn({32});
  QuantizedConvParams p = params_of(c, quantized_input(c));
  std::unique_ptr<OnednnQConv> conv = OnednnQConv::create(qw, bias, p, c.input);
  ASSERT_NE(conv, nullptr);
  for (int64_t zero_point : {0, 77, 0, 128}) {
    SCOPED_TRACE("input zero point " + std::to_string(zero_point));
    Case next = c;
    next.input_zero_point = zero_point;
    const at::Tensor qx = quantized_input(next);
    p.input_scale = qx.q_scale();
    p.input_zero_point = zero_point;
    p.clamp.reset();
    conv = conv->with_params(p);
    ASSERT_NE(conv, nullptr);
    const at::Tensor conv_only = LibTorchQConv(qw, bias, p)(qx);
    at::Tensor got = run_ours(*conv, qx, p);
    EXPECT_TRUE(at::equal(got.int_repr(), conv_only.int_repr()))
        << differences(got, conv_only);
    p.clamp = std::pair{0.0, 6.0};
    conv = conv->with_params(p);
    ASSERT_NE(conv, nullptr);
    const at::Tensor want = at::hardtanh(conv_only, 0.0, 6.0);
    got = run_ours(*conv, qx, p);
    EXPECT_TRUE(at::equal(got.int_repr(), want.int_repr()))
        << differences(got, want);
  }
  p.relu = true;  // with the clamp: refused, as create() refuses it
  EXPECT_EQ(conv->with_params(p), nullptr);
}

TEST(OnednnQConv, AcceptsUint8TensorsAndAnyInputLayout) {
  at::manual_seed(0);
  const Case c{{1, 8, 9, 9}, 8, 3, 1, 1, 1, 1, true, true, true, 3, 0};
  const at::Tensor qw = quantized_weight(c), bias = at::randn({8});
  const at::Tensor qx = quantized_input(c);
  const QuantizedConvParams p = params_of(c, qx);
  auto conv = OnednnQConv::create(qw, bias, p, c.input);
  ASSERT_NE(conv, nullptr);
  const at::Tensor want = run_ours(*conv, qx, p);
  // The same bytes as plain uint8, in and out; the input contiguous NCHW.
  at::Tensor out =
      at::empty(conv->output_sizes(),
                at::TensorOptions().dtype(at::kByte).memory_format(kNhwc));
  conv->run(qx.int_repr().contiguous(), out);
  EXPECT_TRUE(at::equal(out, want.int_repr()));
  // Twice (the reorder into the kept NHWC copy is made once), then an input
  // contiguous in neither layout.
  out.zero_();
  conv->run(qx.int_repr().contiguous(), out);
  EXPECT_TRUE(at::equal(out, want.int_repr()));
  out.zero_();
  conv->run(qx.int_repr().transpose(2, 3).contiguous().transpose(2, 3), out);
  EXPECT_TRUE(at::equal(out, want.int_repr()));
}

TEST(OnednnQConv, RefusesWhatItCannotComputeAsLibTorchDoes) {
  at::manual_seed(0);
  const Case c{{1, 8, 9, 9}, 8, 3, 1, 1, 1, 1, true, true, false, 3, 0};
  const at::Tensor qw = quantized_weight(c);
  const at::Tensor qx = quantized_input(c);
  const QuantizedConvParams p = params_of(c, qx);
  const at::Tensor w = at::randn({8, 8, 3, 3});
  // A float weight; weight zero points other than 0; a double bias.
  EXPECT_EQ(OnednnQConv::create(w, at::Tensor(), p, c.input), nullptr);
  EXPECT_EQ(OnednnQConv::create(at::quantize_per_tensor(w, 0.01, 3, at::kQInt8),
                                at::Tensor(), p, c.input),
            nullptr);
  EXPECT_EQ(OnednnQConv::create(qw, at::randn({8}, at::kDouble), p, c.input),
            nullptr);
  // Scales that are zero or NaN; a zero point outside quint8's range.
  for (double bad : {0.0, std::nan(""), -1.0}) {
    QuantizedConvParams q = p;
    q.output_scale = bad;
    EXPECT_EQ(OnednnQConv::create(qw, at::Tensor(), q, c.input), nullptr);
  }
  QuantizedConvParams q = p;
  q.input_zero_point = 256;
  EXPECT_EQ(OnednnQConv::create(qw, at::Tensor(), q, c.input), nullptr);
  // Channels that do not match the weight; an input too small for the kernel.
  EXPECT_EQ(OnednnQConv::create(qw, at::Tensor(), p, {1, 6, 9, 9}), nullptr);
  q = p;
  q.padding = {0, 0};
  EXPECT_EQ(OnednnQConv::create(qw, at::Tensor(), q, {1, 8, 2, 2}), nullptr);
}

TEST(OnednnQConv, RunRefusesTensorsOfOtherSizesOrTypes) {
  at::manual_seed(0);
  const Case c{{1, 8, 9, 9}, 8, 3, 1, 1, 1, 1, true, true, false, 3, 0};
  const at::Tensor qw = quantized_weight(c), qx = quantized_input(c);
  const QuantizedConvParams p = params_of(c, qx);
  auto conv = OnednnQConv::create(qw, at::Tensor(), p, c.input);
  ASSERT_NE(conv, nullptr);
  at::Tensor out =
      at::empty(conv->output_sizes(),
                at::TensorOptions().dtype(at::kByte).memory_format(kNhwc));
  EXPECT_THROW(conv->run(at::randn(c.input), out), c10::Error);
  EXPECT_THROW(conv->run(qx.int_repr()[0].unsqueeze(0).narrow(2, 0, 8), out),
               c10::Error);
  EXPECT_THROW(conv->run(qx, at::empty(conv->output_sizes(), at::kByte)),
               c10::Error);
}

}  // namespace
}  // namespace fx
