// fx::OnednnQLinear against LibTorch's own quantized linear on its onednn
// engine (quantized::linear_prepack, then quantized::linear or linear_relu,
// what torch.ao.nn.quantized's Linear and LinearReLU run): mobilenet_v2's
// and resnet's classifiers, a transformer's projection, a batch of rows,
// per-channel and per-tensor weights, with and without bias, zero and
// non-zero zero points, checked bit for bit; new parameters through
// with_params(); and what create() refuses.
#include "fx_core/compile/onednn_qlinear.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fx {
namespace {

struct Case {
  int64_t rows, in_features, out_features;
  bool per_channel, bias, relu;
  int64_t input_zero_point, output_zero_point;
};

at::Tensor quantized_weight(const Case& c) {
  at::Tensor w = at::randn({c.out_features, c.in_features}) * 0.1;
  if (!c.per_channel) return at::quantize_per_tensor(w, 0.003, 0, at::kQInt8);
  at::Tensor scales = w.abs().amax({1}).to(at::kDouble) / 127.0;
  at::Tensor zero_points = at::zeros({c.out_features}, at::kLong);
  return at::quantize_per_channel(w, scales, zero_points, 0, at::kQInt8);
}

at::Tensor quantized_input(const Case& c) {
  at::Tensor x = at::randn({c.rows, c.in_features});
  const double scale = 0.01 + 0.05 * at::rand({1}).item<double>();
  return at::quantize_per_tensor(x, scale, c.input_zero_point, at::kQUInt8);
}

QuantizedLinearParams params_of(const Case& c, const at::Tensor& qx) {
  QuantizedLinearParams p;
  p.input_scale = qx.q_scale();
  p.input_zero_point = qx.q_zero_point();
  // A scale drawn per case, so that many multipliers are tried.
  p.output_scale = 0.02 + 0.2 * at::rand({1}).item<double>();
  p.output_zero_point = c.output_zero_point;
  p.relu = c.relu;
  return p;
}

// LibTorch's quantized linear on its onednn engine.
at::Tensor libtorch_linear(const at::Tensor& qw, const at::Tensor& bias,
                           const QuantizedLinearParams& p,
                           const at::Tensor& qx) {
  const at::QEngine saved = at::globalContext().qEngine();
  at::globalContext().setQEngine(at::QEngine::ONEDNN);
  auto& dispatcher = c10::Dispatcher::singleton();
  std::vector<c10::IValue> stack{
      qw, bias.defined() ? c10::IValue(bias) : c10::IValue()};
  dispatcher.findSchemaOrThrow("quantized::linear_prepack", "")
      .callBoxed(&stack);
  const c10::IValue packed = stack.at(0);
  stack = {qx, packed, p.output_scale, p.output_zero_point};
  dispatcher
      .findSchemaOrThrow(
          p.relu ? "quantized::linear_relu" : "quantized::linear", "")
      .callBoxed(&stack);
  at::globalContext().setQEngine(saved);
  return stack.at(0).toTensor();
}

at::Tensor run_ours(OnednnQLinear& linear, const at::Tensor& qx,
                    const QuantizedLinearParams& p) {
  at::Tensor out = at::_empty_affine_quantized(
      linear.output_sizes(), at::TensorOptions().dtype(at::kQUInt8),
      p.output_scale, p.output_zero_point);
  linear.run(qx, out);
  return out;
}

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
      c.bias ? at::randn({c.out_features}) * 0.5 : at::Tensor();
  const at::Tensor qx = quantized_input(c);
  const QuantizedLinearParams p = params_of(c, qx);
  auto linear = OnednnQLinear::create(qw, bias, p, {c.rows, c.in_features});
  ASSERT_NE(linear, nullptr);
  const at::Tensor want = libtorch_linear(qw, bias, p, qx);
  const at::Tensor got = run_ours(*linear, qx, p);
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_TRUE(at::equal(got.int_repr(), want.int_repr()))
      << differences(got, want) << " (" << linear->implementation() << ")";
}

TEST(OnednnQLinear, EqualsLibTorch) {
  // rows, in, out, per_channel, bias, relu, input zp, output zp
  const std::vector<Case> cases = {
      {1, 1280, 1000, true, true, false, 0, 0},    // mobilenet_v2
      {1, 2048, 1000, true, true, false, 0, 61},   // resnet50
      {8, 512, 512, true, true, false, 128, 120},  // a projection
      {3, 100, 37, false, true, true, 17, 0},      // odd sizes, per tensor
      {2, 64, 48, true, false, true, 255, 5},      // no bias
      {5, 33, 7, false, false, false, 1, 254},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.rows) + " x " +
                 std::to_string(c.in_features) + " -> " +
                 std::to_string(c.out_features));
    for (uint64_t seed = 0; seed < 4; ++seed) expect_equal_to_libtorch(c, seed);
  }
}

TEST(OnednnQLinear, WithParamsEqualsLibTorchForTheNewParams) {
  at::manual_seed(0);
  const Case c{2, 96, 40, true, true, false, 5, 10};
  const at::Tensor qw = quantized_weight(c), bias = at::randn({40});
  QuantizedLinearParams p = params_of(c, quantized_input(c));
  auto linear = OnednnQLinear::create(qw, bias, p, {2, 96});
  ASSERT_NE(linear, nullptr);
  for (int64_t zero_point : {0, 77, 0, 128}) {
    SCOPED_TRACE("input zero point " + std::to_string(zero_point));
    Case next = c;
    next.input_zero_point = zero_point;
    const at::Tensor qx = quantized_input(next);
    p.input_scale = qx.q_scale();
    p.input_zero_point = zero_point;
    p.relu = zero_point == 77;
    linear = linear->with_params(p);
    ASSERT_NE(linear, nullptr);
    const at::Tensor want = libtorch_linear(qw, bias, p, qx);
    const at::Tensor got = run_ours(*linear, qx, p);
    EXPECT_TRUE(at::equal(got.int_repr(), want.int_repr()))
        << differences(got, want);
  }
}

TEST(OnednnQLinear, RefusesWhatItCannotComputeAsLibTorchDoes) {
  at::manual_seed(0);
  const Case c{1, 16, 8, true, true, false, 3, 0};
  const at::Tensor qw = quantized_weight(c);
  const QuantizedLinearParams p = params_of(c, quantized_input(c));
  const at::Tensor w = at::randn({8, 16});
  // A float weight; weight zero points other than 0; a double bias; a bias
  // of another length; an input of another width or rank.
  EXPECT_EQ(OnednnQLinear::create(w, at::Tensor(), p, {1, 16}), nullptr);
  EXPECT_EQ(
      OnednnQLinear::create(at::quantize_per_tensor(w, 0.01, 3, at::kQInt8),
                            at::Tensor(), p, {1, 16}),
      nullptr);
  EXPECT_EQ(OnednnQLinear::create(qw, at::randn({8}, at::kDouble), p, {1, 16}),
            nullptr);
  EXPECT_EQ(OnednnQLinear::create(qw, at::randn({9}), p, {1, 16}), nullptr);
  EXPECT_EQ(OnednnQLinear::create(qw, at::Tensor(), p, {1, 15}), nullptr);
  EXPECT_EQ(OnednnQLinear::create(qw, at::Tensor(), p, {1, 1, 16}), nullptr);
  // Scales that are zero, NaN or negative; a zero point outside quint8's.
  for (double bad : {0.0, std::nan(""), -1.0}) {
    QuantizedLinearParams q = p;
    q.output_scale = bad;
    EXPECT_EQ(OnednnQLinear::create(qw, at::Tensor(), q, {1, 16}), nullptr);
  }
  QuantizedLinearParams q = p;
  q.input_zero_point = 256;
  EXPECT_EQ(OnednnQLinear::create(qw, at::Tensor(), q, {1, 16}), nullptr);
  // A run on a tensor of other sizes is an error, not a wrong result.
  auto linear = OnednnQLinear::create(qw, at::Tensor(), p, {1, 16});
  ASSERT_NE(linear, nullptr);
  at::Tensor out = at::empty({1, 8}, at::kByte);
  EXPECT_THROW(linear->run(at::zeros({2, 16}, at::kByte), out), c10::Error);
}

}  // namespace
}  // namespace fx
