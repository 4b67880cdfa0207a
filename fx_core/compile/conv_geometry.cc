#include "fx_core/compile/conv_geometry.h"

namespace fx {

bool conv_geometry_fits(const ConvGeometry& g,
                        const std::vector<int64_t>& weight_sizes,
                        const std::vector<int64_t>& input_sizes) {
  if (weight_sizes.size() != 4 || input_sizes.size() != 4 ||
      g.stride.size() != 2 || g.padding.size() != 2 || g.dilation.size() != 2 ||
      g.groups < 1) {
    return false;
  }
  for (int i = 0; i < 2; ++i) {
    if (g.stride[i] < 1 || g.padding[i] < 0 || g.dilation[i] < 1) {
      return false;
    }
  }
  if (weight_sizes[0] % g.groups != 0 ||
      input_sizes[1] != weight_sizes[1] * g.groups) {
    return false;
  }
  for (int64_t s : input_sizes) {
    if (s < 1) return false;
  }
  // The dilated kernel within the padded input (else torch refuses: the
  // integer division below would round a negative span up to one pixel).
  for (int i = 0; i < 2; ++i) {
    const int64_t span = g.dilation[i] * (weight_sizes[2 + i] - 1) + 1;
    if (weight_sizes[2 + i] < 1 ||
        input_sizes[2 + i] + 2 * g.padding[i] < span) {
      return false;
    }
  }
  return true;
}

std::vector<int64_t> conv_output_sizes(
    const ConvGeometry& g, const std::vector<int64_t>& weight_sizes,
    const std::vector<int64_t>& input_sizes) {
  std::vector<int64_t> out{input_sizes[0], weight_sizes[0], 0, 0};
  for (int i = 0; i < 2; ++i) {
    const int64_t k = weight_sizes[2 + i];
    out[2 + i] =
        (input_sizes[2 + i] + 2 * g.padding[i] - g.dilation[i] * (k - 1) - 1) /
            g.stride[i] +
        1;
  }
  return out;
}

}  // namespace fx
