// The window of a Conv2d or MaxPool2d module as torch 1.13's gradual type
// checker reads it off the module (graph_gradual_typechecker.py's
// calculate_out_dimension), for gradual_typecheck and for
// unify_refinements' symbolic step.
#ifndef PLUGINS_OPTIMIZATION_CONV_WINDOW_H_
#define PLUGINS_OPTIMIZATION_CONV_WINDOW_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "fx/plugin_api.hpp"

namespace fx_optimization {

struct ConvWindow {
  using Pair = std::array<int64_t, 2>;
  Pair padding, kernel_size, stride, dilation;
};

// The window in the module's constructor arguments `config`: each field an
// int (used for both dimensions) or a pair of ints; a missing or None
// stride is kernel_size (MaxPool2d's default). nullopt, with `*error`
// naming the field, when a field is neither.
std::optional<ConvWindow> conv_window(const fxp::Arg& config,
                                      std::string* error);

// Python's a // b (rounded towards negative infinity); b != 0.
int64_t floor_div(int64_t a, int64_t b);

// calculate_out_dimension's numerator less the input size, for dimension
// `index`: 2 * padding - dilation * (kernel_size - 1) - 1; nullopt when it
// does not fit in 64 bits. The output size is (d_in + offset) // stride[0]
// + 1 for both dimensions (torch's rule divides by stride[0] twice: a bug
// kept).
std::optional<int64_t> out_offset(const ConvWindow& w, size_t index);

// calculate_out_dimension of the size `d_in` for dimension `index`,
// (d_in + offset) // stride[0] + 1; nullopt when a step does not fit in 64
// bits. stride[0] != 0.
std::optional<int64_t> out_size(int64_t d_in, const ConvWindow& w,
                                size_t index);

}  // namespace fx_optimization

#endif  // PLUGINS_OPTIMIZATION_CONV_WINDOW_H_
