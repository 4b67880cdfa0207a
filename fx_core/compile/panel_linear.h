// fx::PanelLinear: one fx_inference.linear (fx_core/runtime/ops/
// inference_ops.cc) on the InferencePlan's own AVX-512 product
// (panel_gemm.h), whose weights' next block is prefetched while the current
// one computes, as linear_choice.h may pick it for a shape.
//
// Why: inside a network a linear's weights come from memory, and oneDNN's
// matmul loses 10-15% of its in-cache speed reading them there (a
// transformer's projections at 128 tokens; BENCHMARKS.md, issue 35).
//
// create() returns nullptr unless the CPU has AVX-512F and the op is
// float32 as OnednnLinear accepts it. The weights are packed once into
// panel_gemm's panels (in memory on huge pages, shared between the shapes
// of a dynamic plan: shared_weights.h); the output columns are split by
// panels over LibTorch's threads. The bias and residual are added and a
// ReLU applied in registers; another activation is applied after, in
// place, by ATen's kernel. run() takes a float32 input of the planned sizes
// (copied to contiguous when it is not) and writes `out`, a contiguous
// float32 tensor of output_sizes(); the residual may be `out` itself (with
// k over one block of panel_gemm, copied first). Results equal the reference
// within float32 rounding. One object is for one thread at a time.
#ifndef FX_CORE_COMPILE_PANEL_LINEAR_H_
#define FX_CORE_COMPILE_PANEL_LINEAR_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "fx_core/compile/fused_linear.h"

namespace fx {

class PanelLinear : public FusedLinearKernel {
 public:
  // Whether this CPU can run it (AVX-512F).
  static bool available();
  static std::unique_ptr<PanelLinear> create(const at::Tensor& weight,
                                             const at::Tensor& bias,
                                             const FusedLinearParams& params,
                                             std::vector<int64_t> input_sizes);
  ~PanelLinear() override;
  PanelLinear(const PanelLinear&) = delete;
  PanelLinear& operator=(const PanelLinear&) = delete;

  void run(const at::Tensor& input, const at::Tensor* residual,
           const at::Tensor& out) override;
  void evict_weights() const override;

 private:
  struct Impl;
  PanelLinear(std::unique_ptr<Impl> impl, FusedLinearShape shape);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fx

#endif  // FX_CORE_COMPILE_PANEL_LINEAR_H_
