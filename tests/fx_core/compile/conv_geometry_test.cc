// conv_geometry (fx_core/compile/conv_geometry.h) against LibTorch itself:
// over a grid of input sizes, kernels, strides, paddings, dilations and
// groups, a geometry fits exactly when at::conv2d accepts it, and the
// output sizes are at::conv2d's.
#include "fx_core/compile/conv_geometry.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fx {
namespace {

std::string describe(const ConvGeometry& g, const std::vector<int64_t>& w,
                     const std::vector<int64_t>& in) {
  return "input " + std::to_string(in[1]) + "x" + std::to_string(in[2]) +
         " kernel " + std::to_string(w[2]) + " stride " +
         std::to_string(g.stride[0]) + " padding " +
         std::to_string(g.padding[0]) + " dilation " +
         std::to_string(g.dilation[0]) + " groups " + std::to_string(g.groups);
}

TEST(ConvGeometryTest, FitsAndSizesAreLibTorchs) {
  int accepted = 0, refused = 0;
  for (int64_t size : {1, 2, 3, 5, 8}) {
    for (int64_t k : {1, 2, 3, 5}) {
      for (int64_t stride : {1, 2, 3}) {
        for (int64_t padding : {0, 1, 2}) {
          for (int64_t dilation : {1, 2}) {
            for (int64_t groups : {1, 2, 3}) {
              ConvGeometry g{{stride, stride},
                             {padding, padding},
                             {dilation, dilation},
                             groups};
              const std::vector<int64_t> w{6, 6 / groups, k, k};
              const std::vector<int64_t> in{1, 6, size, size + 1};
              const at::Tensor x = at::zeros(in);
              const at::Tensor weight = at::zeros(w);
              at::Tensor out;
              try {
                out = at::conv2d(x, weight, {}, g.stride, g.padding, g.dilation,
                                 groups);
              } catch (const c10::Error&) {
              }
              SCOPED_TRACE(describe(g, w, in));
              ASSERT_EQ(conv_geometry_fits(g, w, in), out.defined());
              if (!out.defined()) {
                ++refused;
                continue;
              }
              ++accepted;
              EXPECT_EQ(conv_output_sizes(g, w, in), out.sizes().vec());
            }
          }
        }
      }
    }
  }
  // The grid has both kinds, including kernels larger than the padded input
  // whose span the integer division would round up to one pixel.
  EXPECT_GT(accepted, 100);
  EXPECT_GT(refused, 100);
}

TEST(ConvGeometryTest, RefusesWhatTorchRefuses) {
  const std::vector<int64_t> w{4, 2, 3, 3};
  const std::vector<int64_t> in{1, 4, 8, 8};
  const ConvGeometry ok{{1, 1}, {1, 1}, {1, 1}, 2};
  EXPECT_TRUE(conv_geometry_fits(ok, w, in));
  ConvGeometry bad = ok;
  bad.stride = {0, 1};
  EXPECT_FALSE(conv_geometry_fits(bad, w, in));
  bad = ok;
  bad.padding = {-1, 0};
  EXPECT_FALSE(conv_geometry_fits(bad, w, in));
  bad = ok;
  bad.dilation = {1};
  EXPECT_FALSE(conv_geometry_fits(bad, w, in));
  bad = ok;
  bad.groups = 3;  // 4 output channels
  EXPECT_FALSE(conv_geometry_fits(bad, w, in));
  bad = ok;
  bad.groups = 1;  // 2 input channels a group, 4 given
  EXPECT_FALSE(conv_geometry_fits(bad, w, in));
  EXPECT_FALSE(conv_geometry_fits(ok, w, {1, 4, 0, 8}));
  EXPECT_FALSE(conv_geometry_fits(ok, w, {1, 4, 8}));
}

}  // namespace
}  // namespace fx
