// Built-in ops, part 4: the functions torchvision 0.14 marks with
// torch.fx.wrap, so that traced torchvision models keep them as one
// call_function node: stochastic_depth and Swin Transformer's three helpers.
// Each is a line-by-line translation of torchvision's Python.
#include <ATen/ATen.h>

#include "fx_core/ir/python_repr.h"
#include "fx_core/runtime/ops/builtin_ops.h"
#include "fx_core/runtime/ops/window_attention.h"
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
        kWindowAttentionSignature, shifted_window_attention_call);
}

}  // namespace fx::ops
