// Swin Transformer's windowed attention as torchvision 0.14 computes it
// (torchvision.models.swin_transformer.shifted_window_attention, a
// torch.fx.wrap'ed function traced models keep as one call): the reference
// kernel of that call (torchvision_ops.cc) and of fx_inference.window_attention
// (inference_ops.cc), which the InferencePlan runs as one planned step
// (fx_core/compile/window_attention.h). Line by line torchvision's Python in
// ATen ops, so results are PyTorch's.
#ifndef FX_CORE_RUNTIME_OPS_WINDOW_ATTENTION_H_
#define FX_CORE_RUNTIME_OPS_WINDOW_ATTENTION_H_

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <c10/core/TensorOptions.h>
#include <c10/util/Optional.h>

#include <cstdint>
#include <vector>

namespace fx {
class OpArgs;
}  // namespace fx

namespace fx::ops {

// The Python signature both targets are registered with.
inline constexpr const char* kWindowAttentionSignature =
    "input, qkv_weight, proj_weight, relative_position_bias, window_size, "
    "num_heads, shift_size, attention_dropout=0.0, dropout=0.0, "
    "qkv_bias=None, proj_bias=None, logit_scale=None";

// input [B, H, W, C] -> [B, H, W, C]: zero-padded to whole windows, rolled
// by -shift_size, attention within each window (qkv and proj linears,
// num_heads heads, the relative position bias and, for a shifted window, the
// mask of shifted_window_mask), rolled back and cropped. logit_scale is
// Swin V2's cosine attention. Dropout as torchvision calls it (training).
at::Tensor shifted_window_attention(
    const at::Tensor& input, const at::Tensor& qkv_weight,
    const at::Tensor& proj_weight, const at::Tensor& relative_position_bias,
    c10::IntArrayRef window_size, int64_t num_heads,
    c10::IntArrayRef shift_size, double attention_dropout, double dropout,
    const c10::optional<at::Tensor>& qkv_bias,
    const c10::optional<at::Tensor>& proj_bias,
    const c10::optional<at::Tensor>& logit_scale);

// The registry's kernel for both targets: the call's bound arguments
// (kWindowAttentionSignature) through shifted_window_attention.
c10::IValue shifted_window_attention_call(OpArgs& args);

// The additive mask of a shifted window's attention on a padded
// [pad_h, pad_w] map: [num_windows, N, N] (N = window[0] * window[1]),
// -100 between tokens that came from different regions of the roll, else 0;
// num_windows in row-major window order.
at::Tensor shifted_window_mask(int64_t pad_h, int64_t pad_w,
                               c10::IntArrayRef window, c10::IntArrayRef shift,
                               const at::TensorOptions& options);

// The shift torchvision applies: none along a dimension whose window covers
// the whole padded map.
std::vector<int64_t> effective_shift(int64_t pad_h, int64_t pad_w,
                                     c10::IntArrayRef window,
                                     c10::IntArrayRef shift);

}  // namespace fx::ops

#endif  // FX_CORE_RUNTIME_OPS_WINDOW_ATTENTION_H_
