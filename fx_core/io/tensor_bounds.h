// Whether a tensor read from a file stays inside the bytes it was given.
//
// A torch.save file states each tensor's storage (its element count, in the
// pickle, and its bytes, in a zip record) and the tensor's storage offset,
// sizes and strides separately; LibTorch's unpickler believes all of them.
// A tensor claiming 4,096 doubles over 16 stored bytes then reads (and a
// copy of it writes out) whatever memory follows. These checks refuse such
// tensors before anything reads them.
#ifndef FX_CORE_IO_TENSOR_BOUNDS_H_
#define FX_CORE_IO_TENSOR_BOUNDS_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

namespace fx {

// "" when every element of `t` (storage offset, sizes, strides and element
// size) lies inside its storage's bytes; otherwise what is wrong ("storage
// offset 1000000 and sizes [2, 3] strides [3, 1] need 4000024 bytes; the
// storage holds 24"). Only strided tensors are accepted.
std::string tensor_outside_storage(const at::Tensor& t);

}  // namespace fx

#endif  // FX_CORE_IO_TENSOR_BOUNDS_H_
