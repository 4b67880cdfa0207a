// fx::OnednnMatmul: one fx_inference.matmul (torch.matmul of two tensors of
// the same rank >= 2 and the same batch sizes, times a number;
// fx_core/runtime/ops/inference_ops.cc) bound to oneDNN's matmul for float32
// CPU inference, as the InferencePlan runs it: attention's q @ k^T * scale
// and att @ v.
//
// create() builds the primitive for operands of given sizes AND strides, so
// views (permuted, transposed heads) are read where they lie, without the
// copies torch.matmul makes to fold them into bmm; the scale is an eltwise
// post-op. run() requires operands of exactly the planned sizes and strides
// (fits() says whether they are) and writes `out`'s data, a float32 tensor
// of output_sizes() (batch..., M, N): contiguous, the layout torch.matmul
// gives, unless create() was given output strides (which must not make
// elements overlap).
// Results equal the reference within float32 rounding.
//
// Uses the libdnnl.so.2 LibTorch links; no oneDNN type appears here. One
// object is for one thread at a time.
#ifndef FX_CORE_COMPILE_ONEDNN_MATMUL_H_
#define FX_CORE_COMPILE_ONEDNN_MATMUL_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace fx {

// An operand's planned layout.
struct StridedLayout {
  std::vector<int64_t> sizes, strides;
};

class OnednnMatmul {
 public:
  // nullptr when oneDNN cannot compute it as the reference does (ranks
  // differ or are below 2 or above 6, batch sizes differ, inner sizes
  // differ, an empty operand, a negative or zero stride). `out_strides`,
  // when given, are the strides run() writes `out` with (of output_sizes()'s
  // rank, not overlapping; a view into a larger buffer, such as heads
  // written side by side), else it is contiguous.
  static std::unique_ptr<OnednnMatmul> create(
      const StridedLayout& a, const StridedLayout& b, double scale,
      std::vector<int64_t> out_strides = {});
  ~OnednnMatmul();
  OnednnMatmul(const OnednnMatmul&) = delete;
  OnednnMatmul& operator=(const OnednnMatmul&) = delete;

  const std::vector<int64_t>& output_sizes() const;
  // Whether `a` and `b` are float32 CPU tensors of the planned layouts.
  bool fits(const at::Tensor& a, const at::Tensor& b) const;
  // `out`'s data is written with the planned output strides.
  void run(const at::Tensor& a, const at::Tensor& b, const at::Tensor& out);

 private:
  struct Impl;
  explicit OnednnMatmul(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fx

#endif  // FX_CORE_COMPILE_ONEDNN_MATMUL_H_
