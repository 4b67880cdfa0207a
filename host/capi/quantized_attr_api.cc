// The FxApi entry of version 9, GraphSetQuantizedAttr: a quantized tensor
// attribute made from its integers, scales and zero points (DLPack has no
// quantized dtypes, so a plugin hands the three parts and the host builds
// the tensor torch's _make_per_tensor_quantized_tensor /
// _make_per_channel_quantized_tensor would).
#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/ir/python_repr.h"
#include "host/capi/api_internal.h"

namespace fx::host::internal {
namespace {

// The elements of a small host tensor (scales, zero points) as doubles, in
// row-major order; integers and floating point of any width.
std::vector<double> numbers_of(const DLTensor* t, const char* what) {
  require(t, what);
  if (t->ndim < 0 || t->ndim > 1 || (t->ndim == 1 && t->shape == nullptr)) {
    fail(FX_INVALID_ARGUMENT, cat(what, " must have 0 or 1 dimensions"));
  }
  if (t->device.device_type != kDLCPU || t->data == nullptr) {
    fail(FX_INVALID_ARGUMENT, cat(what, " must be a CPU tensor with data"));
  }
  const int64_t n = t->ndim == 0 ? 1 : t->shape[0];
  const int64_t stride = t->ndim == 1 && t->strides ? t->strides[0] : 1;
  const char* base = static_cast<const char*>(t->data) + t->byte_offset;
  const int bytes = t->dtype.bits / 8;
  std::vector<double> out;
  for (int64_t i = 0; i < n; ++i) {
    const char* p = base + i * stride * bytes;
    switch (t->dtype.code * 100 + t->dtype.bits) {
      case kDLFloat * 100 + 32:
        out.push_back(*reinterpret_cast<const float*>(p));
        break;
      case kDLFloat * 100 + 64:
        out.push_back(*reinterpret_cast<const double*>(p));
        break;
      case kDLInt * 100 + 8:
        out.push_back(*reinterpret_cast<const int8_t*>(p));
        break;
      case kDLInt * 100 + 16:
        out.push_back(*reinterpret_cast<const int16_t*>(p));
        break;
      case kDLInt * 100 + 32:
        out.push_back(*reinterpret_cast<const int32_t*>(p));
        break;
      case kDLInt * 100 + 64:
        out.push_back(
            static_cast<double>(*reinterpret_cast<const int64_t*>(p)));
        break;
      case kDLUInt * 100 + 8:
        out.push_back(*reinterpret_cast<const uint8_t*>(p));
        break;
      default:
        fail(FX_INVALID_ARGUMENT,
             cat(what, " must hold floating point numbers or integers"));
    }
  }
  return out;
}

// The range of zero points of the quantized dtype stored as `values`.
std::pair<double, double> zero_point_range(at::ScalarType values) {
  switch (values) {
    case at::kChar:
      return {-128, 127};
    case at::kByte:
      return {0, 255};
    case at::kInt:
      return {std::numeric_limits<int32_t>::min(),
              std::numeric_limits<int32_t>::max()};
    default:
      fail(FX_INVALID_ARGUMENT,
           cat("values must be int8 (qint8), uint8 (quint8) or int32 "
               "(qint32), not ",
               c10::toString(values)));
  }
}

void check_qparams(const std::vector<double>& scales,
                   const std::vector<double>& zero_points,
                   std::pair<double, double> range) {
  for (size_t i = 0; i < scales.size(); ++i) {
    if (!(scales[i] > 0) || !std::isfinite(scales[i])) {
      fail(FX_INVALID_ARGUMENT,
           cat("scale ", i, " is ", python_float_repr(scales[i]),
               " (a quantization scale is positive and finite)"));
    }
    if (zero_points[i] != std::nearbyint(zero_points[i]) ||
        zero_points[i] < range.first || zero_points[i] > range.second) {
      fail(FX_INVALID_ARGUMENT,
           cat("zero point ", i, " is ", python_float_repr(zero_points[i]),
               ", outside ", static_cast<int64_t>(range.first), "..",
               static_cast<int64_t>(range.second)));
    }
  }
}

at::Tensor quantized_tensor(const at::Tensor& values,
                            const std::vector<double>& scales,
                            const std::vector<double>& zero_points,
                            int64_t axis) {
  check_qparams(scales, zero_points, zero_point_range(values.scalar_type()));
  const size_t expected =
      axis == -1 ? 1 : static_cast<size_t>(values.size(axis));
  if (scales.size() != expected || zero_points.size() != expected) {
    fail(FX_INVALID_ARGUMENT,
         cat("there are ", scales.size(), " scales and ", zero_points.size(),
             " zero points; ",
             axis == -1 ? cat("a per tensor quantization has 1 of each")
                        : cat("axis ", axis, " has ", expected, " channels")));
  }
  if (axis == -1) {
    return at::_make_per_tensor_quantized_tensor(
        values, scales[0], static_cast<int64_t>(zero_points[0]));
  }
  at::Tensor s = at::tensor(scales, at::kDouble);
  at::Tensor z = at::tensor(zero_points, at::kDouble).to(at::kLong);
  return at::_make_per_channel_quantized_tensor(values, s, z, axis);
}

void set_quantized_attr(FxGraph* g, const char* name, DLManagedTensor* values,
                        const DLTensor* scales, const DLTensor* zero_points,
                        int64_t axis) {
  if (values == nullptr) fail(FX_INVALID_ARGUMENT, "values must not be NULL");
  // Owned from here on: fromDLPack calls its deleter when done.
  at::Tensor ints;
  try {
    ints = at::fromDLPack(values).contiguous().clone();
  } catch (const std::exception& e) {
    fail(FX_INVALID_ARGUMENT, cat("cannot read values: ", e.what()));
  }
  AttributeStore* store = require_store(live_graph(g));
  require(name, "qualified_name");
  if (axis < -1 || axis >= ints.dim()) {
    fail(FX_INVALID_ARGUMENT,
         cat("axis ", axis, " is out of range for values of ", ints.dim(),
             " dimensions (-1: per tensor)"));
  }
  at::Tensor q = quantized_tensor(ints, numbers_of(scales, "scales"),
                                  numbers_of(zero_points, "zero_points"), axis);
  std::string error;
  if (!store->set_tensor_attr(name, q, &error)) {
    fail(FX_INVALID_ARGUMENT, error);
  }
}

}  // namespace

void fill_quantized_attr_entry(FxApi& t) {
  t.GraphSetQuantizedAttr = [](FxGraph* g, const char* name,
                               DLManagedTensor* values, const DLTensor* scales,
                               const DLTensor* zero_points, int64_t axis) {
    return guarded("GraphSetQuantizedAttr", [&] {
      set_quantized_attr(g, name, values, scales, zero_points, axis);
    });
  };
}

}  // namespace fx::host::internal
