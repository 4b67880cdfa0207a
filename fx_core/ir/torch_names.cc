#include "fx_core/ir/torch_names.h"

#include <algorithm>
#include <initializer_list>

namespace fx {
namespace {

bool one_of(std::string_view name, std::initializer_list<std::string_view> of) {
  return std::find(of.begin(), of.end(), name) != of.end();
}

// torch.device's index: 0 ... 127 (c10::DeviceIndex), no leading zeros.
bool is_device_index(std::string_view digits) {
  if (digits.empty() || digits.size() > 3) return false;
  if (digits.size() > 1 && digits[0] == '0') return false;
  int value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  return value <= 127;
}

}  // namespace

bool is_dtype_name(std::string_view name) {
  return one_of(
      name,
      {"torch.float32", "torch.float",     "torch.float64",  "torch.double",
       "torch.float16", "torch.half",      "torch.bfloat16", "torch.complex32",
       "torch.chalf",   "torch.complex64", "torch.cfloat",   "torch.complex128",
       "torch.cdouble", "torch.uint8",     "torch.int8",     "torch.int16",
       "torch.short",   "torch.int32",     "torch.int",      "torch.int64",
       "torch.long",    "torch.bool",      "torch.qint8",    "torch.quint8",
       "torch.qint32",  "torch.quint4x2",  "torch.quint2x4"});
}

bool is_device_name(std::string_view name) {
  size_t colon = name.find(':');
  std::string_view type = name.substr(0, colon);
  if (!one_of(type, {"cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl",
                     "ideep", "hip", "ve", "fpga", "ort", "xla", "lazy",
                     "vulkan", "mps", "meta", "hpu", "privateuseone"})) {
    return false;
  }
  return colon == std::string_view::npos ||
         is_device_index(name.substr(colon + 1));
}

bool is_layout_name(std::string_view name) {
  return one_of(name, {"torch.strided", "torch.sparse_coo", "torch.sparse_csr",
                       "torch.sparse_csc", "torch.sparse_bsr",
                       "torch.sparse_bsc", "torch._mkldnn"});
}

bool is_qscheme_name(std::string_view name) {
  return one_of(name,
                {"torch.per_tensor_affine", "torch.per_channel_affine",
                 "torch.per_tensor_symmetric", "torch.per_channel_symmetric",
                 "torch.per_channel_affine_float_qparams"});
}

bool is_memory_format_name(std::string_view name) {
  return one_of(name, {"torch.contiguous_format", "torch.channels_last",
                       "torch.channels_last_3d", "torch.preserve_format",
                       "torch.legacy_contiguous_format"});
}

}  // namespace fx
