#include "plugins/optimization/conv_window.h"

#include <cstdint>

namespace fx_optimization {
namespace {

using fxp::ArgView;

// An int or a pair of ints at `key`, as a pair; nullopt otherwise.
std::optional<ConvWindow::Pair> pair_at(const fxp::Arg& config,
                                        const char* key) {
  ArgView v = fxp::dict_get(config.view(), key);
  if (v && v.kind() == FX_ARG_INT) {
    return ConvWindow::Pair{v.as_int(), v.as_int()};
  }
  if (v && (v.kind() == FX_ARG_TUPLE || v.kind() == FX_ARG_LIST) &&
      v.size() == 2 && v[0].kind() == FX_ARG_INT && v[1].kind() == FX_ARG_INT) {
    return ConvWindow::Pair{v[0].as_int(), v[1].as_int()};
  }
  return std::nullopt;
}

}  // namespace

std::optional<ConvWindow> conv_window(const fxp::Arg& config,
                                      std::string* error) {
  ConvWindow w;
  for (auto [key, field] : {std::pair{"padding", &w.padding},
                            std::pair{"kernel_size", &w.kernel_size},
                            std::pair{"dilation", &w.dilation}}) {
    std::optional<ConvWindow::Pair> pair = pair_at(config, key);
    if (!pair) {
      *error = std::string("TypeError: the module's ") + key +
               " is not an int or a pair of ints";
      return std::nullopt;
    }
    *field = *pair;
  }
  ArgView stride = fxp::dict_get(config.view(), "stride");
  if (!stride || stride.is_none()) {
    w.stride = w.kernel_size;
  } else if (std::optional<ConvWindow::Pair> pair = pair_at(config, "stride")) {
    w.stride = *pair;
  } else {
    *error = "TypeError: the module's stride is not an int or a pair of ints";
    return std::nullopt;
  }
  return w;
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t out_stride(const ConvWindow& w, size_t index,
                   bool first_stride_for_both) {
  return w.stride[first_stride_for_both ? 0 : index];
}

std::optional<int64_t> out_offset(const ConvWindow& w, size_t index) {
  int64_t padding2 = 0, reach = 0, kernel1 = 0, out = 0;
  if (__builtin_mul_overflow(w.padding[index], 2, &padding2) ||
      __builtin_sub_overflow(w.kernel_size[index], 1, &kernel1) ||
      __builtin_mul_overflow(w.dilation[index], kernel1, &reach) ||
      __builtin_sub_overflow(padding2, reach, &out) ||
      __builtin_sub_overflow(out, 1, &out)) {
    return std::nullopt;
  }
  return out;
}

std::optional<int64_t> out_size(int64_t d_in, const ConvWindow& w, size_t index,
                                bool first_stride_for_both) {
  const std::optional<int64_t> offset = out_offset(w, index);
  const int64_t stride = out_stride(w, index, first_stride_for_both);
  int64_t numerator = 0, out = 0;
  if (!offset || __builtin_add_overflow(d_in, *offset, &numerator) ||
      (numerator == INT64_MIN && stride == -1) ||
      __builtin_add_overflow(floor_div(numerator, stride), 1, &out)) {
    return std::nullopt;
  }
  return out;
}

}  // namespace fx_optimization
