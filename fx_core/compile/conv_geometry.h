// fx::ConvGeometry: where a 2-d convolution's windows fall (stride,
// padding, dilation, groups), shared by the InferencePlan's float and int8
// convolutions (onednn_conv.h, onednn_qconv.h), and the checks and output
// sizes both derive from it as torch.nn.functional.conv2d does.
//
// Sizes are (N, C, H, W) for inputs and outputs and (O, C / groups, kH, kW)
// for weights. No LibTorch and no oneDNN here: plain integers.
#ifndef FX_CORE_COMPILE_CONV_GEOMETRY_H_
#define FX_CORE_COMPILE_CONV_GEOMETRY_H_

#include <cstdint>
#include <vector>

namespace fx {

struct ConvGeometry {
  std::vector<int64_t> stride, padding, dilation;  // two each
  int64_t groups = 1;
};

// Whether `g` places windows on inputs of `input_sizes` for weights of
// `weight_sizes`: two strides, paddings and dilations (strides and
// dilations positive, paddings not negative), groups that divide the
// output channels and account for the input channels, positive input
// sizes, and a dilated kernel no larger than the padded input (an output
// of at least one pixel).
bool conv_geometry_fits(const ConvGeometry& g,
                        const std::vector<int64_t>& weight_sizes,
                        const std::vector<int64_t>& input_sizes);

// The output's sizes (N, O, H', W'), each spatial one
// (H + 2 * padding - dilation * (k - 1) - 1) / stride + 1, for a geometry
// that fits.
std::vector<int64_t> conv_output_sizes(const ConvGeometry& g,
                                       const std::vector<int64_t>& weight_sizes,
                                       const std::vector<int64_t>& input_sizes);

}  // namespace fx

#endif  // FX_CORE_COMPILE_CONV_GEOMETRY_H_
