// fx::TensorMeta: a value's tensor layout as the InferencePlan recorded it
// on its planning run (sizes, strides, dtype, device), and whether run-time
// tensors still match it. Plain data; the planner compares layouts with it,
// allocates buffers from it and checks each run's operands against it.
#ifndef FX_CORE_COMPILE_TENSOR_META_H_
#define FX_CORE_COMPILE_TENSOR_META_H_

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fx {

struct TensorMeta {
  bool is_tensor = false;
  std::vector<int64_t> sizes, strides;
  c10::ScalarType dtype = c10::ScalarType::Undefined;
  c10::Device device = c10::kCPU;
  bool plain = false;  // defined, strided, dense CPU data, no conj/neg bit

  // The layout of `v` (is_tensor false for anything but a defined tensor).
  static TensorMeta of(const c10::IValue& v);
  // Same sizes, strides, dtype and device as `t`.
  bool matches(const at::Tensor& t) const;
  bool same_layout(const TensorMeta& o) const {
    return sizes == o.sizes && strides == o.strides && dtype == o.dtype;
  }
  // A plain float32 CPU tensor (what the oneDNN and pointwise steps take).
  bool float_cpu() const {
    return is_tensor && plain && dtype == c10::kFloat && device.is_cpu();
  }
  // The bytes its strided span covers.
  size_t nbytes() const;
};

}  // namespace fx

#endif  // FX_CORE_COMPILE_TENSOR_META_H_
