// fx_inference.pointwise on float32 CPU tensors in ONE TensorIterator pass,
// for the InferencePlan: the iterator is built once when the plan is (over
// the planned output buffer and the inputs, broadcasting them), and each run
// evaluates the whole program per chunk (pointwise_loop.h) instead of one
// ATen kernel and one intermediate tensor per instruction. Results equal the
// reference kernel (runtime/ops/inference_ops.cc) within float32 rounding
// of the transcendental functions (1e-6 relative; the arithmetic is exact).
//
// A kernel is immutable once created; run() may be called from one thread
// per iterator (the iterator carries the operands).
#ifndef FX_CORE_COMPILE_POINTWISE_KERNEL_H_
#define FX_CORE_COMPILE_POINTWISE_KERNEL_H_

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <vector>

#include "fx_core/runtime/ops/pointwise_program.h"

namespace at {
class TensorIterator;
class TensorIteratorBase;
}  // namespace at

namespace fx {

class PointwiseKernel {
 public:
  // The kernel for a node's program and scalars with `num_inputs` inputs;
  // nullptr when the program does not parse or this CPU lacks AVX2/FMA.
  static std::unique_ptr<PointwiseKernel> create(
      const std::vector<std::string>& program, std::vector<double> scalars,
      size_t num_inputs);

  // The iterator over `out` and `inputs` (all float32 CPU; inputs broadcast
  // to out's sizes). Throws c10::Error when they do not fit.
  at::TensorIterator make_iterator(const at::Tensor& out,
                                   const std::vector<at::Tensor>& inputs) const;
  // One pass over the iterator's current operands.
  void run(at::TensorIteratorBase& it) const;

 private:
  explicit PointwiseKernel(PointwiseProgram program)
      : program_(std::move(program)) {}
  PointwiseProgram program_;
};

}  // namespace fx

#endif  // FX_CORE_COMPILE_POINTWISE_KERNEL_H_
