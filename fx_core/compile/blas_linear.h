// fx::BlasLinear: one fx_inference.linear (fx_core/runtime/ops/
// inference_ops.cc) on the BLAS LibTorch calls, OpenBLAS, with its GEMM
// split over LibTorch's own (OpenMP) threads, as the InferencePlan runs it
// where linear_choice.h picks it.
//
// Why: OpenBLAS's pthread build runs a multi-threaded product on a thread
// pool of its own. Next to LibTorch's OpenMP pool the two take turns on the
// cores, each spinning while the other works, and at 2 threads every engine
// that calls OpenBLAS there is slower than at 1 (BENCHMARKS.md, issue 35).
// oneDNN stays on the OpenMP pool but its f32 GEMM is about 1.5x slower per
// thread on AVX2. Here the output's columns are split in as many parts as
// LibTorch has threads, each part one single-threaded cblas_sgemm call (the
// BLAS's own pool set to one thread for the duration of run(), and its
// count restored after: fx::OneBlasThread), so the products run at OpenBLAS's
// speed on LibTorch's pool. The bias (and residual) are written into the output
// first and accumulated into (beta 1); the activation is applied in place
// to each part by ATen's kernel.
//
// create() returns nullptr unless the process's BLAS is OpenBLAS (its
// cblas_sgemm and openblas_{get,set}_num_threads found) and the op is
// float32 as OnednnLinear accepts it; run() takes a float32 input of the
// planned sizes (copied to contiguous when it is not) and writes `out`, a
// contiguous float32 tensor of output_sizes(). Results equal the reference
// within float32 rounding (the bias and residual are summed before the
// product is added to them). While run() is in progress, a BLAS call from
// another thread of the process runs on one thread. One object is for one
// thread at a time.
#ifndef FX_CORE_COMPILE_BLAS_LINEAR_H_
#define FX_CORE_COMPILE_BLAS_LINEAR_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "fx_core/compile/fused_linear.h"

namespace fx {

class BlasLinear : public FusedLinearKernel {
 public:
  // Whether this process's BLAS is one BlasLinear can drive (OpenBLAS).
  static bool available();
  static std::unique_ptr<BlasLinear> create(const at::Tensor& weight,
                                            const at::Tensor& bias,
                                            const FusedLinearParams& params,
                                            std::vector<int64_t> input_sizes);
  ~BlasLinear() override;
  BlasLinear(const BlasLinear&) = delete;
  BlasLinear& operator=(const BlasLinear&) = delete;

  void run(const at::Tensor& input, const at::Tensor* residual,
           const at::Tensor& out) override;
  void evict_weights() const override;

 private:
  struct Impl;
  BlasLinear(std::unique_ptr<Impl> impl, FusedLinearShape shape);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fx

#endif  // FX_CORE_COMPILE_BLAS_LINEAR_H_
