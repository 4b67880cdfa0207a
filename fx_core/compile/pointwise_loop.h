// The inner loop of the InferencePlan's fused pointwise kernel
// (pointwise_kernel.h): one TensorIterator 2-d loop over float32 data,
// evaluating a PointwiseProgram with at::vec::Vectorized<float> in blocks
// of a few hundred elements (each instruction over the block, temporaries
// in a thread's scratch memory; short rows several to a block, and the
// instructions that read only values broadcast across rows once a call:
// pointwise_loop.cc says how). pointwise_loop.cc is compiled for AVX2 + FMA
// (the same Vectorized and Sleef functions ATen's AVX2 kernels use), so call
// it only when pointwise_loop_supported() says the CPU has them.
//
// data[0] is the output, data[1 + K] input K; strides in bytes as the
// iterator gives them (strides[j] for operand j along the inner dimension,
// strides[ntensors + j] along the outer one). Inputs may be broadcast
// (stride 0) or strided; numerics follow ATen's vectorized CPU kernels.
#ifndef FX_CORE_COMPILE_POINTWISE_LOOP_H_
#define FX_CORE_COMPILE_POINTWISE_LOOP_H_

#include <cstdint>

#include "fx_core/runtime/ops/pointwise_program.h"

namespace fx {

bool pointwise_loop_supported();

void pointwise_loop(const PointwiseProgram& program, char** data,
                    const int64_t* strides, int64_t size0, int64_t size1);

}  // namespace fx

#endif  // FX_CORE_COMPILE_POINTWISE_LOOP_H_
