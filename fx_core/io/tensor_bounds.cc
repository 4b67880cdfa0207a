#include "fx_core/io/tensor_bounds.h"

#include <limits>

#include "fx_core/support/strings.h"

namespace fx {
namespace {

std::string int_list(c10::IntArrayRef values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ", ";
    append(&out, values[i]);
  }
  return out + "]";
}

std::string shape_of(const at::Tensor& t) {
  return cat("storage offset ", t.storage_offset(), ", sizes ",
             int_list(t.sizes()), " and strides ", int_list(t.strides()));
}

// offset + sum((size - 1) * stride) + 1, in elements; false on overflow.
bool elements_spanned(const at::Tensor& t, unsigned __int128* span) {
  constexpr unsigned __int128 kLimit = std::numeric_limits<uint64_t>::max();
  unsigned __int128 last = static_cast<uint64_t>(t.storage_offset());
  for (int64_t d = 0; d < t.dim(); ++d) {
    last += static_cast<unsigned __int128>(t.size(d) - 1) *
            static_cast<uint64_t>(t.stride(d));
    if (last > kLimit) return false;
  }
  *span = last + 1;
  return true;
}

}  // namespace

std::string tensor_outside_storage(const at::Tensor& t) {
  if (t.layout() != c10::kStrided) {
    return cat("layout ", c10::toString(t.layout()),
               " is not supported (only strided tensors)");
  }
  if (t.storage_offset() < 0) return cat("negative ", shape_of(t));
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) < 0 || t.stride(d) < 0) {
      return cat("negative size or stride: ", shape_of(t));
    }
  }
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) == 0) return "";  // no elements, nothing read
  }
  unsigned __int128 span = 0;
  uint64_t item = t.dtype().itemsize();
  uint64_t held = t.storage().nbytes();
  if (!elements_spanned(t, &span) || span * item > held) {
    std::string need =
        span != 0 && span * item <= std::numeric_limits<uint64_t>::max()
            ? cat(static_cast<uint64_t>(span * item), " bytes")
            : std::string("more than 2^64 bytes");
    return cat(shape_of(t), " of ", item, "-byte elements need ", need,
               "; the storage holds ", held);
  }
  return "";
}

}  // namespace fx
