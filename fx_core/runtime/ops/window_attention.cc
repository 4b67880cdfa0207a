#include "fx_core/runtime/ops/window_attention.h"

#include <ATen/ATen.h>

#include <cmath>
#include <vector>

#include "fx_core/runtime/op_registry.h"

namespace fx::ops {

using at::indexing::None;
using at::indexing::Slice;

std::vector<int64_t> effective_shift(int64_t pad_h, int64_t pad_w,
                                     c10::IntArrayRef window,
                                     c10::IntArrayRef shift) {
  std::vector<int64_t> s = shift.vec();
  if (window[0] >= pad_h) s[0] = 0;
  if (window[1] >= pad_w) s[1] = 0;
  return s;
}

at::Tensor shifted_window_mask(int64_t pad_h, int64_t pad_w,
                               c10::IntArrayRef window, c10::IntArrayRef shift,
                               const at::TensorOptions& options) {
  at::Tensor mask = at::zeros({pad_h, pad_w}, options);
  const c10::optional<int64_t> h[3][2] = {
      {0, -window[0]}, {-window[0], -shift[0]}, {-shift[0], c10::nullopt}};
  const c10::optional<int64_t> w[3][2] = {
      {0, -window[1]}, {-window[1], -shift[1]}, {-shift[1], c10::nullopt}};
  int64_t count = 0;
  for (const auto& hs : h) {
    for (const auto& ws : w) {
      mask.index_put_({Slice(hs[0], hs[1]), Slice(ws[0], ws[1])}, count);
      ++count;
    }
  }
  const int64_t num_windows = (pad_h / window[0]) * (pad_w / window[1]);
  mask = mask.view({pad_h / window[0], window[0], pad_w / window[1], window[1]})
             .permute({0, 2, 1, 3})
             .reshape({num_windows, window[0] * window[1]});
  mask = mask.unsqueeze(1) - mask.unsqueeze(2);
  return mask.masked_fill(mask != 0, -100.0).masked_fill(mask == 0, 0.0);
}

namespace {

// q @ k^T: scaled, or Swin V2's cosine similarity times the clamped
// exponentiated logit scale.
at::Tensor attention_logits(at::Tensor q, const at::Tensor& k,
                            const c10::optional<at::Tensor>& logit_scale,
                            int64_t head_dim) {
  if (logit_scale) {
    auto normalize = [](const at::Tensor& t) {
      return t / at::norm(t, 2, {-1}, true).clamp_min(1e-12).expand_as(t);
    };
    at::Tensor attn = at::matmul(normalize(q), normalize(k).transpose(-2, -1));
    at::Tensor scale =
        at::clamp(*logit_scale, c10::nullopt, std::log(100.0)).exp();
    return attn * scale;
  }
  q = q * std::pow(static_cast<double>(head_dim), -0.5);
  return q.matmul(k.transpose(-2, -1));
}

// What torchvision's function needs of its arguments, as errors rather
// than out-of-range reads or divisions by zero.
void check_arguments(const at::Tensor& input, c10::IntArrayRef window,
                     int64_t num_heads, c10::IntArrayRef shift) {
  TORCH_CHECK(input.dim() == 4,
              "shifted_window_attention: input must be [B, H, W, C], got ",
              input.dim(), " dimensions");
  TORCH_CHECK(window.size() == 2 && window[0] > 0 && window[1] > 0,
              "shifted_window_attention: window_size must be two positive "
              "ints, got ",
              window);
  TORCH_CHECK(shift.size() == 2,
              "shifted_window_attention: shift_size must be two ints, got ",
              shift);
  TORCH_CHECK(num_heads > 0 && input.size(3) % num_heads == 0,
              "shifted_window_attention: num_heads must divide the ",
              input.size(3), " channels, got ", num_heads);
}

}  // namespace

c10::IValue shifted_window_attention_call(OpArgs& a) {
  return shifted_window_attention(
      a.tensor(0), a.tensor(1), a.tensor(2), a.tensor(3), a.int_list(4),
      a.to_int(5), a.int_list(6), a.to_double(7), a.to_double(8),
      a.optional_tensor(9), a.optional_tensor(10), a.optional_tensor(11));
}

at::Tensor shifted_window_attention(
    const at::Tensor& input, const at::Tensor& qkv_weight,
    const at::Tensor& proj_weight, const at::Tensor& relative_position_bias,
    c10::IntArrayRef window, int64_t num_heads, c10::IntArrayRef shift_size,
    double attention_dropout, double dropout,
    const c10::optional<at::Tensor>& qkv_bias_in,
    const c10::optional<at::Tensor>& proj_bias,
    const c10::optional<at::Tensor>& logit_scale) {
  check_arguments(input, window, num_heads, shift_size);
  const int64_t B = input.size(0), H = input.size(1), W = input.size(2),
                C = input.size(3);
  const int64_t pad_r = (window[1] - W % window[1]) % window[1];
  const int64_t pad_b = (window[0] - H % window[0]) % window[0];
  at::Tensor x = at::constant_pad_nd(input, {0, 0, 0, pad_r, 0, pad_b}, 0);
  const int64_t pad_H = x.size(1), pad_W = x.size(2);
  const std::vector<int64_t> shift =
      effective_shift(pad_H, pad_W, window, shift_size);
  const bool shifted = shift[0] + shift[1] > 0;
  if (shifted) x = at::roll(x, {-shift[0], -shift[1]}, {1, 2});

  const int64_t num_windows = (pad_H / window[0]) * (pad_W / window[1]);
  x = x.view(
      {B, pad_H / window[0], window[0], pad_W / window[1], window[1], C});
  x = x.permute({0, 1, 3, 2, 4, 5})
          .reshape({B * num_windows, window[0] * window[1], C});

  c10::optional<at::Tensor> qkv_bias = qkv_bias_in;
  if (logit_scale && qkv_bias) {
    qkv_bias = qkv_bias->clone();
    const int64_t length = qkv_bias->numel() / 3;
    qkv_bias->index({Slice(length, 2 * length)}).zero_();
  }
  at::Tensor qkv = at::linear(x, qkv_weight, qkv_bias);
  qkv = qkv.reshape({x.size(0), x.size(1), 3, num_heads, C / num_heads})
            .permute({2, 0, 3, 1, 4});
  at::Tensor attn =
      attention_logits(qkv[0], qkv[1], logit_scale, C / num_heads);
  attn = attn + relative_position_bias;

  if (shifted) {
    at::Tensor mask =
        shifted_window_mask(pad_H, pad_W, window, shift, x.options());
    attn = attn.view({x.size(0) / num_windows, num_windows, num_heads,
                      x.size(1), x.size(1)});
    attn = attn + mask.unsqueeze(1).unsqueeze(0);
    attn = attn.view({-1, num_heads, x.size(1), x.size(1)});
  }
  attn = at::softmax(attn, -1);
  // torchvision calls F.dropout without `training`, i.e. training=True.
  attn = at::dropout(attn, attention_dropout, true);

  x = attn.matmul(qkv[2]).transpose(1, 2).reshape({x.size(0), x.size(1), C});
  x = at::linear(x, proj_weight, proj_bias);
  x = at::dropout(x, dropout, true);

  x = x.view(
      {B, pad_H / window[0], pad_W / window[1], window[0], window[1], C});
  x = x.permute({0, 1, 3, 2, 4, 5}).reshape({B, pad_H, pad_W, C});
  if (shifted) x = at::roll(x, {shift[0], shift[1]}, {1, 2});
  return x.index({Slice(), Slice(None, H), Slice(None, W), Slice()})
      .contiguous();
}

}  // namespace fx::ops
