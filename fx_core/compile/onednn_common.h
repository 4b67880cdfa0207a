// What the InferencePlan's oneDNN steps (onednn_conv, onednn_linear,
// onednn_matmul) share: the CPU engine and the fused ops' activations as
// oneDNN post-ops. Included by those .cc files only (it pulls in dnnl.hpp).
#ifndef FX_CORE_COMPILE_ONEDNN_COMMON_H_
#define FX_CORE_COMPILE_ONEDNN_COMMON_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <string_view>
#include <vector>

#include "fx_core/compile/conv_geometry.h"

namespace fx {

// The process's oneDNN CPU engine (made on first use).
dnnl::engine& onednn_engine();

// Appends `activation`, as fx_inference.conv2d / linear name it ("none",
// "relu", "hardtanh" with min_val / max_val, "hardswish", "silu", "sigmoid",
// "hardsigmoid", "gelu", "gelu_tanh"), to `ops` as eltwise post-ops; false
// for any other name.
bool append_onednn_activation(std::string_view activation, double min_val,
                              double max_val, dnnl::post_ops* ops);

// A 2-d convolution's sizes as oneDNN's convolution_forward takes them:
// src, dst and bias; weights as `weights_tag` lays them out (goihw, with the
// groups split off, when grouped); strides, dilations (oneDNN counts them
// from 0) and padding. For a geometry that fits (conv_geometry.h).
struct OnednnConvDims {
  dnnl::memory::dims src, dst, weights, bias, strides, dilates, pad;
  dnnl::memory::format_tag weights_tag = dnnl::memory::format_tag::oihw;
};
OnednnConvDims onednn_conv_dims(const ConvGeometry& g,
                                const std::vector<int64_t>& weight_sizes,
                                const std::vector<int64_t>& input_sizes);

// Weights reordered once into the layout a primitive wants, in memory on
// huge pages (huge_pages.h) that `block` keeps alive.
struct PackedWeights {
  std::shared_ptr<void> block;
  dnnl::memory memory;
};
PackedWeights pack_weights(dnnl::memory user, const dnnl::memory::desc& want);

// Flushes `w`'s memory out of every cache level (x86 clflush; a no-op
// elsewhere), so that a run timed next reads it from memory, as each layer
// of a network does at batch 1 (conv_choice.h).
void evict_from_caches(const PackedWeights& w);

// Moves `pd` past oneDNN's AMX kernels to the next one it offers; false
// when it offers no other. For int8 primitives with zero points: oneDNN
// 2.6.3's jit_1x1:avx512_core_amx_int8 convolution corrupts the heap with
// them (192 -> 64 channels at 6x6, with an input or an output zero point:
// "free(): invalid pointer" in a program of oneDNN calls alone, on an
// Intel CPU with AMX), so those primitives take the AVX-512 VNNI kernels.
bool skip_amx_kernels(dnnl::primitive_desc& pd);

// The attribute tensor `weight` (its values in `user`) in layout `want`:
// the copy the SharedWeights in scope on this thread already holds for that
// tensor and layout (packed into it on first request; shared_weights.h),
// or without one a copy of its own (pack_weights).
PackedWeights pack_weights_of(const at::Tensor& weight, dnnl::memory user,
                              const dnnl::memory::desc& want);

// A convolution's input in NHWC, as its primitive reads it. An input of
// `sizes` that arrives NCHW-contiguous (a model's input image) is reordered
// by oneDNN into a buffer made on first use and reused every run: LibTorch's
// contiguous(channels_last) allocated a new tensor each run and took about
// as long as a 3-channel stem's convolution. One per step; not thread-safe.
class NhwcInput {
 public:
  NhwcInput(std::vector<int64_t> sizes, dnnl::memory::data_type type)
      : sizes_(std::move(sizes)), type_(type) {}
  // The data of `input` in NHWC: its own when NHWC-contiguous, the buffer
  // when NCHW-contiguous of `sizes`, else a channels_last copy held in
  // *keep.
  const void* data(const at::Tensor& input, dnnl::stream& stream,
                   at::Tensor* keep);

 private:
  std::vector<int64_t> sizes_;
  dnnl::memory::data_type type_;
  at::Tensor buffer_;
  dnnl::memory nchw_, nhwc_;
  dnnl::reorder reorder_;
};

}  // namespace fx

#endif  // FX_CORE_COMPILE_ONEDNN_COMMON_H_
