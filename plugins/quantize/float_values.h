// Reading the elements of the float tensors the quantize passes observe.
#ifndef PLUGINS_QUANTIZE_FLOAT_VALUES_H_
#define PLUGINS_QUANTIZE_FLOAT_VALUES_H_

#include <cstdint>
#include <vector>

#include "fx/plugin_api.hpp"

namespace fx_quant {

// Visits every element of a float32 / float64 tensor, any strides.
template <typename Fn>
inline void for_each_float(const DLTensor& t, Fn&& fn) {
  int64_t count = 1;
  for (int i = 0; i < t.ndim; ++i) count *= t.shape[i];
  if (count == 0) return;
  std::vector<int64_t> index(t.ndim, 0);
  const char* base = static_cast<const char*>(t.data) + t.byte_offset;
  size_t bytes = t.dtype.bits / 8;
  std::vector<int64_t> strides(t.ndim);
  int64_t step = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    strides[i] = t.strides ? t.strides[i] : step;
    step *= t.shape[i];
  }
  for (int64_t k = 0; k < count; ++k) {
    int64_t offset = 0;
    for (int i = 0; i < t.ndim; ++i) offset += index[i] * strides[i];
    const char* p = base + offset * static_cast<int64_t>(bytes);
    fn(bytes == 8 ? *reinterpret_cast<const double*>(p)
                  : *reinterpret_cast<const float*>(p));
    for (int i = t.ndim - 1; i >= 0; --i) {
      if (++index[i] < t.shape[i]) break;
      index[i] = 0;
    }
  }
}

}  // namespace fx_quant

#endif  // PLUGINS_QUANTIZE_FLOAT_VALUES_H_
