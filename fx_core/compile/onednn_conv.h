// fx::OnednnConv: one fx_inference.conv2d (a 2-d convolution with bias,
// residual add and activation; fx_core/runtime/ops/inference_ops.cc) bound to
// oneDNN for float32 CPU inference, as the InferencePlan runs it.
//
// create() builds the oneDNN primitive for one input shape and algorithm,
// with the weights reordered once into the layout oneDNN prefers for it
// (format any; in memory on huge pages, huge_pages.h) and the tail as post-ops:
// the residual as a `sum` post-op (oneDNN accumulates into the destination,
// which must hold the residual first), then the eltwise activation. A
// binary-add post-op would compute the same, but oneDNN 2.6 has no brgemm
// kernel for it and falls back to its older 1x1 kernel, up to 2x slower at 7x7
// (measured on resnet50's shapes). Activations are NHWC (torch.channels_last):
// run() takes any strided float32 input of the planned sizes (others are copied
// to channels_last first) and writes `out`, a channels_last-contiguous float32
// tensor of output_sizes(). When the residual is `out` itself (the plan writes
// into a dead residual's buffer) nothing is copied; otherwise it is copied into
// `out` before the convolution.
//
// Algorithms: kDirect (oneDNN's direct kernels, brgemm on AVX-512, NHWC
// throughout) and kWinograd (3x3, stride 1, no dilation or groups, no
// residual: oneDNN's F(2x2, 3x3) Winograd kernel, which only takes the
// blocked nChw16c layout, so run() reorders the input into it and the
// result back to NHWC). conv_choice.h says which runs and why. Results
// equal the reference kernel within float32 rounding (oneDNN's accumulation
// order; Winograd's transforms round a little more: still within 1e-4 relative
// on the tested models).
//
// Uses the libdnnl.so.2 LibTorch links; no oneDNN type appears here. One
// object is for one thread at a time (its memory handles are re-pointed on
// each run).
#ifndef FX_CORE_COMPILE_ONEDNN_CONV_H_
#define FX_CORE_COMPILE_ONEDNN_CONV_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fx_core/compile/conv_geometry.h"

namespace fx {

// The arguments of fx_inference.conv2d besides its tensors: its geometry,
// and its tail.
struct FusedConvParams : ConvGeometry {
  bool has_residual = false;
  std::string activation = "none";
  double min_val = 0.0, max_val = 0.0;  // hardtanh's bounds
};

enum class ConvAlgorithm { kDirect, kWinograd };

// A depthwise 3x3 convolution (groups = channels, padding 1, no dilation)
// applied to a convolution's result, with its own bias and activation: the
// next node of a 1x1 + depthwise pair (MobileNet-style blocks), as oneDNN's
// fused depthwise post-op (append_dw) computes it. Its kernel writes the
// depthwise result from rows of the 1x1 result still in cache, instead of
// writing the whole 1x1 result and reading it back.
struct DepthwiseTail {
  at::Tensor weight;   // (C, 1, 3, 3)
  at::Tensor bias;     // (C,) or undefined
  int64_t stride = 1;  // 1 or 2, both dimensions
  std::string activation = "none";
  double min_val = 0.0, max_val = 0.0;
};

class OnednnConv {
 public:
  // The primitive for inputs of `input_sizes` (N, C, H, W); nullptr when
  // oneDNN cannot compute the op as the reference does (not float32, not
  // 4-d, an unknown activation, channels that do not divide into groups) or
  // when the algorithm does not apply (winograd_applies). `implementation`
  // names the kernel to take among those oneDNN offers for the algorithm
  // (implementation() strings, e.g. "jit_dw:avx512_core"); empty: oneDNN's
  // first choice; nullptr when it offers no kernel of that name.
  static std::unique_ptr<OnednnConv> create(
      const at::Tensor& weight, const at::Tensor& bias,
      const FusedConvParams& params, std::vector<int64_t> input_sizes,
      ConvAlgorithm algorithm = ConvAlgorithm::kDirect,
      const std::string& implementation = "");
  // The kernels oneDNN offers for `algorithm` with these activations (NHWC
  // for kDirect, nChw16c for kWinograd), in its order of preference, those
  // of its first choice's instruction set only (e.g. brgconv_1x1, jit_1x1
  // and jit, all ":avx512_core"; for Winograd at batch 1 both
  // jit_fp32_wino_2x3 and jit_wino_4x3; never its reference or GEMM
  // fallbacks): the candidates conv_choice.h times. Empty when create()
  // would return nullptr.
  static std::vector<std::string> implementations(
      const at::Tensor& weight, const at::Tensor& bias,
      const FusedConvParams& params, const std::vector<int64_t>& input_sizes,
      ConvAlgorithm algorithm = ConvAlgorithm::kDirect);
  // The convolution followed by `tail` in one primitive (kDirect): its
  // output_sizes() are the tail's. nullptr unless the convolution is 1x1
  // with no residual, groups or dilation, the tail fits it, and oneDNN
  // offers a kernel of its own for the pair: its reference one
  // (ref_fused_convolution) runs the two primitives in turn and is never
  // taken. The primitive's activations are blocked (nChw16c), reordered
  // from and to NHWC as for kWinograd: with NHWC activations oneDNN 2.6's
  // fused kernel (jit_1x1:avx512_core) returns wrong values (every output
  // differs from the two primitives' result, some are inf; its blocked
  // variant matches them exactly).
  static std::unique_ptr<OnednnConv> create_with_depthwise(
      const at::Tensor& weight, const at::Tensor& bias,
      const FusedConvParams& params, std::vector<int64_t> input_sizes,
      const DepthwiseTail& tail);
  // Whether kWinograd may apply to this convolution (oneDNN may still
  // decline it: create() then returns nullptr).
  static bool winograd_applies(const at::Tensor& weight,
                               const FusedConvParams& params);
  ~OnednnConv();
  OnednnConv(const OnednnConv&) = delete;
  OnednnConv& operator=(const OnednnConv&) = delete;

  const std::vector<int64_t>& input_sizes() const;
  const std::vector<int64_t>& output_sizes() const;
  ConvAlgorithm algorithm() const;
  // oneDNN's name for the kernel it chose (e.g. "brgconv:avx512_core").
  std::string implementation() const;
  // Flushes the packed weights out of the caches (evict_from_caches in
  // onednn_common.h), for conv_choice's timing.
  void evict_weights() const;
  // `residual` is required when the params have one (output_sizes()).
  void run(const at::Tensor& input, const at::Tensor* residual,
           const at::Tensor& out);

 private:
  struct Impl;
  explicit OnednnConv(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fx

#endif  // FX_CORE_COMPILE_ONEDNN_CONV_H_
