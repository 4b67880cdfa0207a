// The names of torch's dtypes, devices, layouts and memory formats as
// torch 1.13 spells them (`torch.float32`, `cuda:0`, `torch.strided`,
// `torch.channels_last`): what the fx-graph reader accepts in a `dtype`,
// `device`, `layout` or `memory_format` argument. No LibTorch: the reader
// refuses an unknown name before anything runs.
#ifndef FX_CORE_FORMAT_TORCH_NAMES_H_
#define FX_CORE_FORMAT_TORCH_NAMES_H_

#include <string_view>

namespace fx {

// `torch.float32`, `torch.float` (every attribute of torch that is a dtype).
bool is_dtype_name(std::string_view name);
// `cpu`, `cuda`, `cuda:0` ... `cuda:127`: torch.device(name)'s accepted
// forms (a device type, then an optional index without leading zeros).
bool is_device_name(std::string_view name);
// `torch.strided`, `torch.sparse_coo`, ...
bool is_layout_name(std::string_view name);
// `torch.per_tensor_affine`, `torch.per_channel_affine`, ...
bool is_qscheme_name(std::string_view name);
// `torch.contiguous_format`, `torch.channels_last`, ...
bool is_memory_format_name(std::string_view name);

}  // namespace fx

#endif  // FX_CORE_FORMAT_TORCH_NAMES_H_
