#include "plugins/optimization/conv_window.h"

namespace fx_optimization {
namespace {

using fxp::ArgView;

// An int or a pair of ints at `key`, as a pair; nullopt otherwise.
std::optional<std::vector<int64_t>> pair_at(const fxp::Arg& config,
                                            const char* key) {
  ArgView v = fxp::dict_get(config.view(), key);
  if (v && v.kind() == FX_ARG_INT) {
    return std::vector<int64_t>{v.as_int(), v.as_int()};
  }
  if (v && (v.kind() == FX_ARG_TUPLE || v.kind() == FX_ARG_LIST) &&
      v.size() == 2 && v[0].kind() == FX_ARG_INT && v[1].kind() == FX_ARG_INT) {
    return std::vector<int64_t>{v[0].as_int(), v[1].as_int()};
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
    std::optional<std::vector<int64_t>> pair = pair_at(config, key);
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
  } else if (std::optional<std::vector<int64_t>> pair =
                 pair_at(config, "stride")) {
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

int64_t out_offset(const ConvWindow& w, size_t index) {
  return 2 * w.padding[index] - w.dilation[index] * (w.kernel_size[index] - 1) -
         1;
}

}  // namespace fx_optimization
