// fx::WindowAttention: one fx_inference.window_attention (Swin
// Transformer's shifted_window_attention; fx_core/runtime/ops/
// window_attention.h) as the InferencePlan runs it, for float32 CPU
// inference without dropout and without Swin V2's logit scale:
//  - the zero padding, the roll by -shift and the window partition are one
//    gather into a [windows * N, C] matrix (N tokens a window);
//  - the qkv and proj linears are fused linear kernels with their weights
//    packed once (linear_choice.h: oneDNN, PanelLinear or the BLAS,
//    measured; ATen's linear where it chooses ATen);
//  - softmax(q @ k^T * head_dim^-0.5 + bias + mask) @ v, per window and
//    head, is one fused pass with the scores in an L1-sized scratch
//    (attention_tile.h, on CPUs with AVX2; windows and heads spread over
//    LibTorch's threads), reading q, k and v where the qkv result holds
//    them and writing the heads side by side as proj reads them. Without
//    AVX2, q @ k^T and probs @ v are oneDNN matmuls reading the same
//    operands in place (onednn_matmul.h), with ATen's adds and softmax
//    between. The shifted windows' mask is computed once, at create();
//  - the roll back and the crop are one scatter into `out` (the gather and
//    the scatter spread over LibTorch's threads).
// Results equal the reference within float32 rounding (the scale applied to
// k or to q @ k^T instead of q, the sums in another order).
//
// The intermediate matrices live in a per-thread scratch buffer shared by
// every WindowAttention the thread runs (grown to the largest, kept while
// the thread lives). One object is for one thread at a time.
#ifndef FX_CORE_COMPILE_WINDOW_ATTENTION_H_
#define FX_CORE_COMPILE_WINDOW_ATTENTION_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace fx {

// Whether create() fuses the attention core in tiles where the CPU allows
// (true, the default) or always takes the oneDNN matmuls (for tests).
void set_window_attention_tiles(bool use);

struct WindowAttentionParams {
  std::vector<int64_t> window_size, shift_size;  // two ints each
  int64_t num_heads = 0;
};

class WindowAttention {
 public:
  // For inputs of `input_sizes` ([B, H, W, C]) and a relative position
  // bias of `bias_sizes` ([1, heads, N, N] or [heads, N, N]); nullptr when
  // the plan cannot compute it as the reference does (not float32, weights
  // that are not [3C, C] and [C, C], biases not [3C] and [C] or undefined,
  // C not a multiple of the heads, windows that are not two positive ints,
  // shifts that are not two non-negative ints, an empty input; without
  // AVX2, oneDNN without a matmul for it). The linears take linear_choice's
  // kernel, or ATen's linear where it chooses ATen.
  static std::unique_ptr<WindowAttention> create(
      const at::Tensor& qkv_weight, const at::Tensor& qkv_bias,
      const at::Tensor& proj_weight, const at::Tensor& proj_bias,
      const WindowAttentionParams& params, std::vector<int64_t> input_sizes,
      std::vector<int64_t> bias_sizes);
  ~WindowAttention();
  WindowAttention(const WindowAttention&) = delete;
  WindowAttention& operator=(const WindowAttention&) = delete;

  // The input's sizes, also the result's.
  const std::vector<int64_t>& input_sizes() const;
  const std::vector<int64_t>& bias_sizes() const;
  // input: float32 of input_sizes(), any strides (copied when not
  // contiguous); bias: float32 of bias_sizes(); out: a contiguous float32
  // tensor of input_sizes().
  void run(const at::Tensor& input, const at::Tensor& bias,
           const at::Tensor& out);

 private:
  struct Impl;
  explicit WindowAttention(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fx

#endif  // FX_CORE_COMPILE_WINDOW_ATTENTION_H_
