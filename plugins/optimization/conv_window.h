// The window of a Conv2d or MaxPool2d module as torch 1.13's gradual type
// checker reads it off the module (graph_gradual_typechecker.py's
// calculate_out_dimension), for gradual_typecheck and for
// unify_refinements' symbolic step. Each output size is divided by its own
// stride, which is what the module outputs; torch 1.13 divides both by
// stride[0] (a bug: a stride of (2, 1) halves the width too), which the
// passes keep under their option first_stride_for_both.
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

// The stride the output size of dimension `index` is divided by: its own,
// stride[index]; with `first_stride_for_both`, stride[0] for both
// dimensions, as torch 1.13's calculate_out_dimension does (its bug).
int64_t out_stride(const ConvWindow& w, size_t index,
                   bool first_stride_for_both);

// calculate_out_dimension's numerator less the input size, for dimension
// `index`: 2 * padding - dilation * (kernel_size - 1) - 1; nullopt when it
// does not fit in 64 bits. The output size is (d_in + offset) // out_stride
// + 1.
std::optional<int64_t> out_offset(const ConvWindow& w, size_t index);

// The output size of the size `d_in` for dimension `index`,
// (d_in + out_offset) // out_stride + 1 (out_stride's with
// `first_stride_for_both`); nullopt when a step does not fit in 64 bits.
// That stride != 0.
std::optional<int64_t> out_size(int64_t d_in, const ConvWindow& w, size_t index,
                                bool first_stride_for_both);

}  // namespace fx_optimization

#endif  // PLUGINS_OPTIMIZATION_CONV_WINDOW_H_
