// Built-in ops, part 4: the functions torchvision 0.14 marks with
// torch.fx.wrap, so that traced torchvision models keep them as one
// call_function node: stochastic_depth and Swin Transformer's three helpers.
// Each is a line-by-line translation of torchvision's Python.
#include <ATen/ATen.h>

#include <cmath>

#include "fx_core/ir/python_repr.h"
#include "fx_core/runtime/ops/builtin_ops.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx::ops {
namespace {

using at::indexing::Ellipsis;
using at::indexing::None;
using at::indexing::Slice;
using c10::IValue;

IValue stochastic_depth(OpArgs& a) {
  double p = a.to_double(1);
  std::string mode = a.to_string(2);
  if (p < 0.0 || p > 1.0) {
    throw FxError(cat("drop probability has to be between 0 and 1, but got ",
                      python_float_repr(p)));
  }
  if (mode != "batch" && mode != "row") {
    throw FxError(
        cat("mode has to be either 'batch' or 'row', but got ", mode));
  }
  const at::Tensor& x = a.tensor(0);
  if (!a.to_bool(3) || p == 0.0) return x;
  double survival = 1.0 - p;
  std::vector<int64_t> size(x.dim(), 1);
  if (mode == "row") size[0] = x.size(0);
  at::Tensor noise = at::empty(size, x.options()).bernoulli_(survival);
  if (survival > 0.0) noise.div_(survival);
  return x * noise;
}

// swin_transformer._patch_merging_pad(x)
IValue patch_merging_pad(OpArgs& a) {
  at::Tensor x = a.tensor(0);
  int64_t H = x.size(-3), W = x.size(-2);
  x = at::constant_pad_nd(x, {0, 0, 0, W % 2, 0, H % 2}, 0);
  at::Tensor x0 =
      x.index({Ellipsis, Slice(0, None, 2), Slice(0, None, 2), Slice()});
  at::Tensor x1 =
      x.index({Ellipsis, Slice(1, None, 2), Slice(0, None, 2), Slice()});
  at::Tensor x2 =
      x.index({Ellipsis, Slice(0, None, 2), Slice(1, None, 2), Slice()});
  at::Tensor x3 =
      x.index({Ellipsis, Slice(1, None, 2), Slice(1, None, 2), Slice()});
  return at::cat({x0, x1, x2, x3}, -1);
}

// swin_transformer._get_relative_position_bias(table, index, window_size)
IValue relative_position_bias(OpArgs& a) {
  std::vector<int64_t> window = a.int_list(2);
  int64_t n = window[0] * window[1];
  at::Tensor bias = a.tensor(0).index({a.tensor(1)});
  bias = bias.view({n, n, -1});
  return bias.permute({2, 0, 1}).contiguous().unsqueeze(0);
}

// swin_transformer.shifted_window_attention(...)
IValue shifted_window_attention(OpArgs& a) {
  const at::Tensor& input = a.tensor(0);
  const at::Tensor& qkv_weight = a.tensor(1);
  const at::Tensor& proj_weight = a.tensor(2);
  const at::Tensor& relative_position_bias = a.tensor(3);
  std::vector<int64_t> window = a.int_list(4);
  int64_t num_heads = a.to_int(5);
  std::vector<int64_t> shift = a.int_list(6);
  double attention_dropout = a.to_double(7);
  double dropout = a.to_double(8);
  c10::optional<at::Tensor> qkv_bias = a.optional_tensor(9);
  c10::optional<at::Tensor> proj_bias = a.optional_tensor(10);
  c10::optional<at::Tensor> logit_scale = a.optional_tensor(11);

  int64_t B = input.size(0), H = input.size(1), W = input.size(2),
          C = input.size(3);
  int64_t pad_r = (window[1] - W % window[1]) % window[1];
  int64_t pad_b = (window[0] - H % window[0]) % window[0];
  at::Tensor x = at::constant_pad_nd(input, {0, 0, 0, pad_r, 0, pad_b}, 0);
  int64_t pad_H = x.size(1), pad_W = x.size(2);
  if (window[0] >= pad_H) shift[0] = 0;
  if (window[1] >= pad_W) shift[1] = 0;
  bool shifted = shift[0] + shift[1] > 0;
  if (shifted) x = at::roll(x, {-shift[0], -shift[1]}, {1, 2});

  int64_t num_windows = (pad_H / window[0]) * (pad_W / window[1]);
  x = x.view(
      {B, pad_H / window[0], window[0], pad_W / window[1], window[1], C});
  x = x.permute({0, 1, 3, 2, 4, 5})
          .reshape({B * num_windows, window[0] * window[1], C});

  if (logit_scale && qkv_bias) {
    qkv_bias = qkv_bias->clone();
    int64_t length = qkv_bias->numel() / 3;
    qkv_bias->index({Slice(length, 2 * length)}).zero_();
  }
  at::Tensor qkv = at::linear(x, qkv_weight, qkv_bias);
  qkv = qkv.reshape({x.size(0), x.size(1), 3, num_heads, C / num_heads})
            .permute({2, 0, 3, 1, 4});
  at::Tensor q = qkv[0], k = qkv[1], v = qkv[2];
  at::Tensor attn;
  if (logit_scale) {
    auto normalize = [](const at::Tensor& t) {
      return t / at::norm(t, 2, {-1}, true).clamp_min(1e-12).expand_as(t);
    };
    attn = at::matmul(normalize(q), normalize(k).transpose(-2, -1));
    at::Tensor scale =
        at::clamp(*logit_scale, c10::nullopt, std::log(100.0)).exp();
    attn = attn * scale;
  } else {
    q = q * std::pow(static_cast<double>(C / num_heads), -0.5);
    attn = q.matmul(k.transpose(-2, -1));
  }
  attn = attn + relative_position_bias;

  if (shifted) {
    at::Tensor mask = at::zeros({pad_H, pad_W}, x.options());
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
    mask =
        mask.view({pad_H / window[0], window[0], pad_W / window[1], window[1]});
    mask = mask.permute({0, 2, 1, 3})
               .reshape({num_windows, window[0] * window[1]});
    mask = mask.unsqueeze(1) - mask.unsqueeze(2);
    mask = mask.masked_fill(mask != 0, -100.0).masked_fill(mask == 0, 0.0);
    attn = attn.view({x.size(0) / num_windows, num_windows, num_heads,
                      x.size(1), x.size(1)});
    attn = attn + mask.unsqueeze(1).unsqueeze(0);
    attn = attn.view({-1, num_heads, x.size(1), x.size(1)});
  }
  attn = at::softmax(attn, -1);
  // torchvision calls F.dropout without `training`, i.e. training=True.
  attn = at::dropout(attn, attention_dropout, true);

  x = attn.matmul(v).transpose(1, 2).reshape({x.size(0), x.size(1), C});
  x = at::linear(x, proj_weight, proj_bias);
  x = at::dropout(x, dropout, true);

  x = x.view(
      {B, pad_H / window[0], pad_W / window[1], window[0], window[1], C});
  x = x.permute({0, 1, 3, 2, 4, 5}).reshape({B, pad_H, pad_W, C});
  if (shifted) x = at::roll(x, {shift[0], shift[1]}, {1, 2});
  return x.index({Slice(), Slice(None, H), Slice(None, W), Slice()})
      .contiguous();
}

}  // namespace

void register_torchvision_ops(OpRegistry& r) {
  r.add(Opcode::kCallFunction,
        "torchvision.ops.stochastic_depth.stochastic_depth",
        "input, p, mode, training=True", stochastic_depth);
  r.add(Opcode::kCallFunction,
        "torchvision.models.swin_transformer._patch_merging_pad", "x",
        patch_merging_pad);
  r.add(Opcode::kCallFunction,
        "torchvision.models.swin_transformer._get_relative_position_bias",
        "relative_position_bias_table, relative_position_index, window_size",
        relative_position_bias);
  r.add(Opcode::kCallFunction,
        "torchvision.models.swin_transformer.shifted_window_attention",
        "input, qkv_weight, proj_weight, relative_position_bias, window_size, "
        "num_heads, shift_size, attention_dropout=0.0, dropout=0.0, "
        "qkv_bias=None, proj_bias=None, logit_scale=None",
        shifted_window_attention);
}

}  // namespace fx::ops
