// The registry's torch.quantize_per_tensor (fx_core/runtime/ops/
// quantize_ops.cc) against LibTorch's at::quantize_per_tensor: the same
// integers, scale and zero point for every input, on the fast path (ties,
// saturation, both dtypes, lengths that leave a tail, qparams as numbers or
// one-element tensors) and on the inputs it hands to LibTorch (strides, NaN,
// infinities, huge values, other dtypes, a list of tensors).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "fx_core/runtime/op_registry.h"

namespace fx {
namespace {

// The registry's kernel called on `args`, as a graph's node calls it.
c10::IValue call(std::vector<c10::IValue> args) {
  const OpDef* def = OpRegistry::global().resolve(Opcode::kCallFunction,
                                                  "torch.quantize_per_tensor");
  OpArgs a(def->schema, args.data());
  return def->kernel(a);
}

at::Tensor fast_quantize_per_tensor(const at::Tensor& x, double scale,
                                    int64_t zero_point, c10::ScalarType dtype) {
  return call({x, scale, zero_point, dtype}).toTensor();
}

void expect_same(const at::Tensor& x, double scale, int64_t zero_point,
                 c10::ScalarType dtype) {
  at::Tensor want = at::quantize_per_tensor(x, scale, zero_point, dtype);
  at::Tensor got = fast_quantize_per_tensor(x, scale, zero_point, dtype);
  // And with its qparams as one-element tensors (PyTorch's convert_fx
  // graphs read them from attributes).
  at::Tensor from_tensors =
      call({x, at::scalar_tensor(scale, at::kDouble),
            at::scalar_tensor(zero_point, at::kLong), dtype})
          .toTensor();
  EXPECT_TRUE(at::equal(from_tensors.int_repr(), want.int_repr()));
  EXPECT_EQ(from_tensors.q_scale(), want.q_scale());
  ASSERT_EQ(got.scalar_type(), want.scalar_type());
  EXPECT_EQ(got.q_scale(), want.q_scale());
  EXPECT_EQ(got.q_zero_point(), want.q_zero_point());
  EXPECT_EQ(got.sizes(), want.sizes());
  EXPECT_EQ(got.strides(), want.strides());
  EXPECT_TRUE(at::equal(got.int_repr(), want.int_repr()))
      << "scale " << scale << ", zero point " << zero_point << ", "
      << c10::toString(dtype) << ", " << x.numel() << " elements";
}

TEST(QuantizeOpsTest, RandomValuesAsLibTorch) {
  at::manual_seed(0);
  for (int64_t n : {0, 1, 5, 16, 17, 33, 1000, 150528}) {
    at::Tensor x = at::randn({n}) * 4;
    for (double scale : {0.0358, 0.1, 1.0 / 3, 2.5e-4}) {
      expect_same(x, scale, 122, c10::kQUInt8);
      expect_same(x, scale, 0, c10::kQUInt8);
      expect_same(x, scale, 255, c10::kQUInt8);
      expect_same(x, scale, 0, c10::kQInt8);
      expect_same(x, scale, -128, c10::kQInt8);
      expect_same(x, scale, 127, c10::kQInt8);
    }
  }
}

// Values whose scaled value is a half step (ties round to even) or lies a
// float ulp either side of one.
TEST(QuantizeOpsTest, TiesRoundToEvenAsLibTorch) {
  const double scale = 0.25;
  std::vector<float> v;
  for (int k = -600; k <= 600; ++k) {
    const float tie = (k + 0.5f) * 0.25f;
    v.push_back(tie);
    v.push_back(std::nextafter(tie, 1e9f));
    v.push_back(std::nextafter(tie, -1e9f));
  }
  at::Tensor x = at::tensor(v);
  expect_same(x, scale, 3, c10::kQUInt8);
  expect_same(x, scale, 0, c10::kQInt8);
  // 0.1 is not exact in float: the products land beside the ties.
  expect_same(x * 0.4f, 0.1, 7, c10::kQUInt8);
}

TEST(QuantizeOpsTest, SaturatesAsLibTorch) {
  at::Tensor x = at::linspace(-3e5, 3e5, 4097);
  expect_same(x, 0.5, 10, c10::kQUInt8);
  expect_same(x, 1000.0, 10, c10::kQInt8);
}

TEST(QuantizeOpsTest, WhatItHandsToLibTorchIsLibTorchs) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  at::Tensor special =
      at::tensor({1.0f, inf, -inf, nan, 1e30f, -1e30f, 2.0f, 3.0f, 4.0f, 5.0f,
                  6.0f, 7.0f, 8.0f, 9.0f, 10.0f, 11.0f, 12.0f});
  expect_same(special, 0.1, 5, c10::kQUInt8);
  expect_same(special, 0.1, 5, c10::kQInt8);
  expect_same(at::randn({8, 6}).t(), 0.05, 4, c10::kQUInt8);  // strided
  expect_same(
      at::randn({1, 3, 8, 8}).contiguous(at::MemoryFormat::ChannelsLast), 0.05,
      4, c10::kQUInt8);
  expect_same(at::randn({40}), 0.05, 4, c10::kQInt32);
}

TEST(QuantizeOpsTest, BadInputGetsLibTorchsError) {
  at::Tensor x = at::randn({20});
  EXPECT_THROW(
      fast_quantize_per_tensor(x.to(at::kDouble), 0.1, 3, c10::kQUInt8),
      c10::Error);  // "Quantize only works on Float Tensor"
  EXPECT_THROW(fast_quantize_per_tensor(x, 0.1, 300, c10::kQUInt8), c10::Error);
  EXPECT_THROW(fast_quantize_per_tensor(x, 0.1, -129, c10::kQInt8), c10::Error);
}

TEST(QuantizeOpsTest, AListOfTensorsIsLibTorchs) {
  at::Tensor a = at::randn({5}), b = at::randn({7});
  std::vector<at::Tensor> want = at::quantize_per_tensor(
      {a, b}, at::tensor({0.1, 0.2}), at::tensor({3, 4}), c10::kQUInt8);
  c10::List<at::Tensor> got =
      call({c10::List<at::Tensor>({a, b}), at::tensor({0.1, 0.2}),
            at::tensor({3, 4}), c10::kQUInt8})
          .toTensorList();
  ASSERT_EQ(got.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(at::equal(got.get(i).int_repr(), want[i].int_repr()));
  }
}

}  // namespace
}  // namespace fx
