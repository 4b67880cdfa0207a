// fx::OnednnPooling: a 2-d max or average pooling of a float32 CPU tensor
// on oneDNN's pooling primitive (forward inference), for the
// InferencePlan's average pooling steps (pooling_steps.h).
//
// create() builds the primitive for an input of given sizes AND strides
// (NCHW-contiguous or channels_last: oneDNN's fast kernels take those; any
// other layout is refused) and writes the output in the memory format ATen's
// pooling gives for that input. The caller gives the window: kernel,
// stride, dilation (1: dense) and the padding on each side, the right one
// already extended for ceil_mode (pooling_steps.cc derives it from ATen's
// output size). kAvgIncludePad divides by the whole window, kAvgExcludePad
// by its elements inside the input.
//
// Numbers: an average sums the window in order and divides once by its
// count, as ATen's avg_pool2d kernels and its channels_last adaptive one do
// (bit for bit; ATen's NCHW adaptive kernel divides by the height, then by
// the width, and its global average is a mean: those round otherwise). A
// maximum compares: NaN does not propagate, and a window of -inf gives the
// lowest finite float, unlike ATen (the plan's max pooling is
// max_pool_kernel.h).
//
// Uses the libdnnl.so.2 LibTorch links; no oneDNN type appears here. One
// object is for one thread at a time.
#ifndef FX_CORE_COMPILE_ONEDNN_POOLING_H_
#define FX_CORE_COMPILE_ONEDNN_POOLING_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace fx {

struct PoolingWindow {
  enum class Kind { kMax, kAvgIncludePad, kAvgExcludePad };
  Kind kind = Kind::kMax;
  // Per spatial dimension (height, width).
  std::vector<int64_t> kernel, stride, dilation, pad_begin, pad_end;
};

class OnednnPooling {
 public:
  // nullptr when oneDNN cannot compute it as described (not 4-d, an empty
  // or negative window, a layout other than NCHW or NHWC, the window not
  // giving `output_hw`, or no oneDNN kernel).
  static std::unique_ptr<OnednnPooling> create(
      const PoolingWindow& window, const std::vector<int64_t>& input_sizes,
      const std::vector<int64_t>& input_strides,
      const std::vector<int64_t>& output_hw);
  ~OnednnPooling();
  OnednnPooling(const OnednnPooling&) = delete;
  OnednnPooling& operator=(const OnednnPooling&) = delete;

  const std::vector<int64_t>& output_sizes() const;
  // An uninitialised output of the layout run() writes.
  at::Tensor empty_output() const;
  // Whether `input` is a float32 CPU tensor of the planned sizes and layout.
  bool fits(const at::Tensor& input) const;
  // `out`: a tensor like empty_output()'s.
  void run(const at::Tensor& input, const at::Tensor& out);

 private:
  struct Impl;
  explicit OnednnPooling(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fx

#endif  // FX_CORE_COMPILE_ONEDNN_POOLING_H_
