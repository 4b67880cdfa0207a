// fx::quantize_per_tensor_u8 and fx::quantized_add_u8 against LibTorch's
// own at::quantize_per_tensor and quantized::add / add_relu, bit for bit:
// random values, ties, values past the range (quantize: NaN, infinities,
// products beyond int64; add: NaN sums), lengths with and without a
// one-by-one rest, and the blocks of work at::parallel_for cuts at 2
// threads.
#include "fx_core/compile/quantized_kernels.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace fx {
namespace {

at::Tensor ours_quantize(const at::Tensor& x, double scale, int64_t zp) {
  at::Tensor q = at::empty(x.sizes(), at::kByte);
  quantize_per_tensor_u8(x.data_ptr<float>(), q.data_ptr<uint8_t>(), x.numel(),
                         scale, zp);
  return q;
}

TEST(QuantizedKernels, QuantizeEqualsLibTorch) {
  at::manual_seed(0);
  const float inf = std::numeric_limits<float>::infinity();
  for (double scale : {0.02, 0.0173, 1.0 / 3, 0.1, 1e-30}) {
    for (int64_t zp : {0, 3, 128, 255}) {
      for (int64_t n : {1, 7, 8, 1000, 100003}) {
        at::Tensor x = at::randn({n}) * 4;
        const std::vector<float> special = {std::nanf(""),
                                            inf,
                                            -inf,
                                            1e30f,
                                            -1e30f,
                                            3e9f,
                                            -3e9f,
                                            1e19f,
                                            9.3e18f,
                                            2.5f * static_cast<float>(scale),
                                            3.5f * static_cast<float>(scale),
                                            0.0f};
        for (size_t i = 0; i < special.size() && i < static_cast<size_t>(n);
             ++i) {
          x[i] = special[i];
          x[n - 1 - i] = special[i];
        }
        const at::Tensor want =
            at::quantize_per_tensor(x, scale, zp, at::kQUInt8).int_repr();
        EXPECT_TRUE(at::equal(ours_quantize(x, scale, zp), want))
            << "scale " << scale << ", zero point " << zp << ", " << n
            << " values";
      }
    }
  }
}

at::Tensor libtorch_add(const at::Tensor& a, const at::Tensor& b, double scale,
                        int64_t zp, bool relu) {
  std::vector<c10::IValue> stack{a, b, scale, zp};
  c10::Dispatcher::singleton()
      .findSchemaOrThrow(relu ? "quantized::add_relu" : "quantized::add", "")
      .callBoxed(&stack);
  return stack.at(0).toTensor();
}

void expect_add_equal(int64_t n, bool relu, uint64_t seed) {
  at::manual_seed(seed);
  const at::Tensor a =
      at::quantize_per_tensor(at::randn({n}) * 3, 0.0437, 131, at::kQUInt8);
  const at::Tensor b =
      at::quantize_per_tensor(at::randn({n}) * 3, 0.0219, 64, at::kQUInt8);
  QuantizedAddParams p;
  p.a_scale = a.q_scale();
  p.a_zero_point = a.q_zero_point();
  p.b_scale = b.q_scale();
  p.b_zero_point = b.q_zero_point();
  p.scale = 0.0731;
  p.zero_point = 117;
  p.relu = relu;
  at::Tensor out = at::empty({n}, at::kByte);
  quantized_add_u8(static_cast<const uint8_t*>(a.data_ptr()),
                   static_cast<const uint8_t*>(b.data_ptr()),
                   out.data_ptr<uint8_t>(), n, p);
  const at::Tensor want = libtorch_add(a, b, p.scale, p.zero_point, relu);
  EXPECT_TRUE(at::equal(out, want.int_repr()))
      << n << " values, relu " << relu << ", " << at::get_num_threads()
      << " threads";
}

// Sums that are NaN (an infinite dequantized value from a scale beyond
// float's range, plus its negative): LibTorch's vectorised maximum keeps the
// NaN in add_relu, which then clamps to 255 or wraps to 0 by the zero point.
TEST(QuantizedKernels, AddOfNaNSumsEqualsLibTorch) {
  if (!quantized_add_is_libtorchs()) {
    GTEST_SKIP() << "LibTorch does not run its AVX2 kernels here";
  }
  const int64_t n = 200;  // three blocks of 64 and a rest of 8
  at::Tensor bytes = at::arange(n, at::kInt).remainder(256).to(at::kByte);
  const at::Tensor a = at::_make_per_tensor_quantized_tensor(bytes, 1e39, 0);
  const at::Tensor b =
      at::_make_per_tensor_quantized_tensor(bytes.flip(0), 1e39, 255);
  for (int64_t zp : {3, 200}) {
    for (bool relu : {false, true}) {
      QuantizedAddParams p;
      p.a_scale = p.b_scale = 1e39;
      p.b_zero_point = 255;
      p.scale = 0.5;
      p.zero_point = zp;
      p.relu = relu;
      at::Tensor out = at::empty({n}, at::kByte);
      quantized_add_u8(static_cast<const uint8_t*>(a.data_ptr()),
                       static_cast<const uint8_t*>(b.data_ptr()),
                       out.data_ptr<uint8_t>(), n, p);
      EXPECT_TRUE(at::equal(out, libtorch_add(a, b, 0.5, zp, relu).int_repr()))
          << "zero point " << zp << ", relu " << relu;
    }
  }
}

TEST(QuantizedKernels, NothingToDoIsNothingDone) {
  uint8_t guard = 7;
  const float x = 1.0f;
  quantize_per_tensor_u8(&x, &guard, 0, 0.1, 3);
  quantized_add_u8(&guard, &guard, &guard, 0, QuantizedAddParams{});
  EXPECT_EQ(guard, 7);
}

TEST(QuantizedKernels, AddEqualsLibTorch) {
  if (!quantized_add_is_libtorchs()) {
    GTEST_SKIP() << "LibTorch does not run its AVX2 kernels here";
  }
  const int saved = at::get_num_threads();
  for (int threads : {1, 2}) {
    at::set_num_threads(threads);
    // Below a block of 64, a multiple of it, a rest; above the 32768 grain
    // (two blocks of work at 2 threads, each with its own rest).
    for (int64_t n : {5, 64, 75264, 81225, 100003}) {
      for (bool relu : {false, true}) expect_add_equal(n, relu, n + relu);
    }
  }
  at::set_num_threads(saved);
}

}  // namespace
}  // namespace fx
