// fx::max_pool2d_channels_last: 2-d max pooling of a channels_last float32
// CPU tensor with ATen's numbers, for the InferencePlan's pooling steps
// (pooling_steps.h). ATen's max_pool2d also computes the argmax indices
// and drops them (resnet50's stem pooling: 0.35-0.44 ms at 1 thread);
// oneDNN's pooling drops NaN (it compares) and starts a window from the
// lowest finite float (a window of -inf gives -3.4e38). This loop keeps
// ATen's rule: a window's maximum starts at -inf and takes each element
// greater than it (so of equal values, -0 and +0 included, the first
// stays), and a window holding a NaN gives NaN, -inf stays -inf. A NaN
// result's bits may differ from ATen's (all bits set in whole blocks of 16
// channels, where ATen gives the last NaN it met; no float comparison tells
// them apart). AVX2 where the CPU has it (eight channels a lane, 32 in
// registers at a time), SSE2 otherwise (max_pool_rows.h).
//
// `input` is N x C x H x W laid out channels_last; `out` N x C x OH x OW,
// channels_last, with OH / OW the window's output sizes (pad_end is not
// read: windows are clipped to the input). Rows of output are spread over
// LibTorch's threads.
#ifndef FX_CORE_COMPILE_MAX_POOL_KERNEL_H_
#define FX_CORE_COMPILE_MAX_POOL_KERNEL_H_

#include <ATen/core/Tensor.h>

#include "fx_core/compile/onednn_pooling.h"

namespace fx {

void max_pool2d_channels_last(const PoolingWindow& window,
                              const at::Tensor& input, const at::Tensor& out);

}  // namespace fx

#endif  // FX_CORE_COMPILE_MAX_POOL_KERNEL_H_
