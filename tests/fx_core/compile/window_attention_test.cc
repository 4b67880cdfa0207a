// fx::WindowAttention (the InferencePlan's fx_inference.window_attention)
// against the reference kernel, torchvision's shifted_window_attention in
// ATen (fx_core/runtime/ops/window_attention.h; tests/python's
// inference_ops_test holds that one to torchvision itself): Swin-T's
// shapes, shifted and not; padded maps; a shift the window covers; batch
// 2; no biases; the bias without its batch dimension; each case both with
// the fused attention tiles (attention_tile.h, where the CPU has AVX2) and
// with the oneDNN matmuls. create() refuses what it cannot compute as the
// reference does. attention_tile alone against ATen's ops, with no
// subnormal float left in its scratch.
#include "fx_core/compile/window_attention.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "fx_core/compile/attention_tile.h"
#include "fx_core/runtime/ops/window_attention.h"

namespace fx {
namespace {

struct Case {
  std::string what;
  std::vector<int64_t> input;  // B, H, W, C
  int64_t heads;
  std::vector<int64_t> window, shift;
  bool biases = true;
  bool batched_bias = true;
};

struct Weights {
  at::Tensor qkv_w, qkv_b, proj_w, proj_b, bias;
};

Weights weights_for(const Case& c) {
  const int64_t C = c.input[3], N = c.window[0] * c.window[1];
  Weights w;
  // Unit-variance activations, as a trained layer keeps them.
  const double scale = 1.0 / std::sqrt(static_cast<double>(C));
  w.qkv_w = at::randn({3 * C, C}) * scale;
  w.proj_w = at::randn({C, C}) * scale;
  if (c.biases) {
    w.qkv_b = at::randn({3 * C});
    w.proj_b = at::randn({C});
  }
  w.bias = c.batched_bias ? at::randn({1, c.heads, N, N})
                          : at::randn({c.heads, N, N});
  return w;
}

c10::optional<at::Tensor> optional(const at::Tensor& t) {
  return t.defined() ? c10::optional<at::Tensor>(t) : c10::nullopt;
}

void check_once(const Case& c) {
  at::manual_seed(0);
  const Weights w = weights_for(c);
  auto attention = WindowAttention::create(w.qkv_w, w.qkv_b, w.proj_w, w.proj_b,
                                           {c.window, c.shift, c.heads},
                                           c.input, w.bias.sizes().vec());
  ASSERT_NE(attention, nullptr) << c.what;
  EXPECT_EQ(attention->input_sizes(), c.input) << c.what;
  for (int run = 0; run < 2; ++run) {
    const at::Tensor x = at::randn(c.input);
    const at::Tensor want = ops::shifted_window_attention(
        x, w.qkv_w, w.proj_w, w.bias, c.window, c.heads, c.shift, 0.0, 0.0,
        optional(w.qkv_b), optional(w.proj_b), c10::nullopt);
    at::Tensor got = at::full(c.input, std::nan(""));
    attention->run(x, w.bias, got);
    EXPECT_TRUE(at::allclose(got, want, 1e-4, 1e-4))
        << c.what << " run " << run
        << ": max |got - want| = " << (got - want).abs().max().item<double>();
  }
}

// With the attention tiles and with the matmuls.
void check(const Case& c) {
  for (bool tiles : {true, false}) {
    SCOPED_TRACE(tiles ? "attention tiles" : "oneDNN matmuls");
    set_window_attention_tiles(tiles);
    check_once(c);
  }
  set_window_attention_tiles(true);
}

// softmax(q @ k^T * scale + bias + mask) @ v for one [n, d] head whose q,
// k and v rows are `stride` floats apart, written into rows of `out_stride`.
void check_tile(int64_t n, int64_t d, bool masked) {
  at::manual_seed(3);
  const int64_t stride = 3 * d + 5, out_stride = d + 3;
  const at::Tensor qkv = at::randn({n, stride});
  const at::Tensor q = qkv.narrow(1, 0, d), k = qkv.narrow(1, d, d),
                   v = qkv.narrow(1, 2 * d, d);
  const at::Tensor bias = at::randn({n, n});
  const at::Tensor mask =
      at::where(at::rand({n, n}) < 0.3, -100.0, 0.0).to(at::kFloat);
  const float scale = 0.3f;
  at::Tensor scores = at::matmul(q * scale, k.t()) + bias;
  if (masked) scores = scores + mask;
  const at::Tensor want = at::matmul(at::softmax(scores, -1), v);
  at::Tensor out = at::full({n, out_stride}, std::nan(""));
  AttentionTile t;
  t.q = q.data_ptr<float>();
  t.k = k.data_ptr<float>();
  t.v = v.data_ptr<float>();
  t.qkv_stride = stride;
  t.bias = bias.data_ptr<float>();
  t.mask = masked ? mask.data_ptr<float>() : nullptr;
  t.out = out.data_ptr<float>();
  t.out_stride = out_stride;
  std::vector<float> scratch(attention_tile_scratch(n, d));
  attention_tile(t, n, d, scale, scratch.data());
  const at::Tensor got = out.narrow(1, 0, d);
  EXPECT_TRUE(at::allclose(got, want, 1e-5, 1e-5))
      << n << " tokens of " << d << (masked ? ", masked" : "")
      << ": max |got - want| = " << (got - want).abs().max().item<double>();
  EXPECT_TRUE(out.narrow(1, d, out_stride - d).isnan().all().item<bool>())
      << "wrote past its head";
  // The masked scores' exps are below float's normal range; the tile keeps
  // them at 0 (subnormal floats cost a microcode assist each on Intel CPUs:
  // Swin's shifted windows ran 4-5x slower than the others).
  int64_t subnormal = 0;
  for (float x : scratch) subnormal += std::fpclassify(x) == FP_SUBNORMAL;
  EXPECT_EQ(subnormal, 0) << n << " tokens of " << d
                          << (masked ? ", masked" : "");
}

TEST(AttentionTile, AgainstAtenOps) {
  if (!attention_tile_supported()) GTEST_SKIP() << "no AVX2 + FMA here";
  for (bool masked : {false, true}) {
    check_tile(49, 32, masked);  // Swin's windows
    check_tile(1, 8, masked);
    check_tile(13, 12, masked);  // neither a whole number of vectors
    check_tile(70, 5, masked);
  }
}

TEST(WindowAttention, SwinTShapes) {
  check({"stage 1", {1, 56, 56, 96}, 3, {7, 7}, {0, 0}});
  check({"stage 1 shifted", {1, 56, 56, 96}, 3, {7, 7}, {3, 3}});
  check({"stage 4 shifted", {1, 7, 7, 768}, 24, {7, 7}, {3, 3}});
  check({"batch 2, 7 heads of 5", {2, 14, 7, 35}, 7, {7, 7}, {3, 3}});
}

TEST(WindowAttention, PaddedAndShiftedMaps) {
  check({"padded", {2, 10, 13, 32}, 4, {4, 5}, {0, 0}});
  check({"padded and shifted", {2, 10, 13, 32}, 4, {4, 5}, {2, 1}});
  check({"a shift the window covers", {1, 5, 6, 16}, 2, {7, 7}, {3, 3}});
  check({"shifted along one dimension", {1, 6, 14, 16}, 2, {7, 7}, {3, 3}});
}

TEST(WindowAttention, NoBiasesAndAnUnbatchedBias) {
  Case c{"no biases", {1, 14, 14, 24}, 3, {7, 7}, {3, 3}};
  c.biases = false;
  check(c);
  c.what = "bias [heads, N, N]";
  c.biases = true;
  c.batched_bias = false;
  check(c);
}

TEST(WindowAttention, RefusesWhatItCannotCompute) {
  const Case c{"", {1, 14, 14, 24}, 3, {7, 7}, {3, 3}};
  const Weights w = weights_for(c);
  auto make = [&](const at::Tensor& qkv_w, const at::Tensor& proj_b,
                  WindowAttentionParams p, std::vector<int64_t> bias) {
    return WindowAttention::create(qkv_w, w.qkv_b, w.proj_w, proj_b, p, c.input,
                                   bias);
  };
  const WindowAttentionParams ok{c.window, c.shift, c.heads};
  const std::vector<int64_t> bias{1, 3, 49, 49};
  EXPECT_NE(make(w.qkv_w, w.proj_b, ok, bias), nullptr);
  EXPECT_EQ(make(w.qkv_w, w.proj_b, {c.window, c.shift, 5}, bias), nullptr)
      << "24 channels in 5 heads";
  EXPECT_EQ(make(w.qkv_w, w.proj_b, ok, {1, 3, 49, 48}), nullptr)
      << "a bias of another window";
  EXPECT_EQ(make(w.qkv_w.t(), w.proj_b, ok, bias), nullptr) << "qkv [C, 3C]";
  EXPECT_EQ(make(w.qkv_w.to(at::kDouble), w.proj_b, ok, bias), nullptr)
      << "float64";
  EXPECT_EQ(make(w.qkv_w, at::randn({5}), ok, bias), nullptr)
      << "proj bias [5]";
  EXPECT_EQ(make(w.qkv_w, w.proj_b, {{7}, c.shift, 3}, bias), nullptr)
      << "one window size";
  EXPECT_EQ(make(w.qkv_w, w.proj_b, {c.window, {-1, 0}, 3}, bias), nullptr)
      << "a negative shift";
}

}  // namespace
}  // namespace fx
