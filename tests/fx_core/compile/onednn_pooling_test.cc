// OnednnPooling against ATen's pooling kernels on both layouts, and what
// create() refuses.
#include "fx_core/compile/onednn_pooling.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

namespace fx {
namespace {

PoolingWindow window(PoolingWindow::Kind kind, int64_t k, int64_t s,
                     int64_t pad_begin, int64_t pad_end) {
  PoolingWindow w;
  w.kind = kind;
  w.kernel = {k, k};
  w.stride = {s, s};
  w.dilation = {1, 1};
  w.pad_begin = {pad_begin, pad_begin};
  w.pad_end = {pad_end, pad_end};
  return w;
}

TEST(OnednnPooling, MaxPoolingEqualsAtenOnBothLayouts) {
  at::manual_seed(0);
  for (auto format :
       {at::MemoryFormat::Contiguous, at::MemoryFormat::ChannelsLast}) {
    const at::Tensor x = at::randn({2, 19, 15, 15}).contiguous(format);
    auto pool =
        OnednnPooling::create(window(PoolingWindow::Kind::kMax, 3, 2, 1, 1),
                              x.sizes().vec(), x.strides().vec(), {8, 8});
    ASSERT_NE(pool, nullptr);
    ASSERT_TRUE(pool->fits(x));
    const at::Tensor out = pool->empty_output();
    pool->run(x, out);
    const at::Tensor want = at::max_pool2d(x, {3, 3}, {2, 2}, {1, 1});
    EXPECT_TRUE(at::equal(out, want));
    EXPECT_EQ(out.strides(), want.strides());
  }
}

TEST(OnednnPooling, AveragesCountOrSkipThePadding) {
  at::manual_seed(0);
  const at::Tensor x = at::randn({1, 5, 9, 9});
  for (bool include : {true, false}) {
    auto kind = include ? PoolingWindow::Kind::kAvgIncludePad
                        : PoolingWindow::Kind::kAvgExcludePad;
    auto pool = OnednnPooling::create(window(kind, 3, 2, 1, 1), x.sizes().vec(),
                                      x.strides().vec(), {5, 5});
    ASSERT_NE(pool, nullptr);
    const at::Tensor out = pool->empty_output();
    pool->run(x, out);
    const at::Tensor want =
        at::avg_pool2d(x, {3, 3}, {2, 2}, {1, 1}, false, include);
    EXPECT_TRUE(at::allclose(out, want, 1e-6, 1e-6)) << include;
  }
}

TEST(OnednnPooling, RefusesWhatItCannotCompute) {
  const auto max = window(PoolingWindow::Kind::kMax, 2, 2, 0, 0);
  // Not 4-d.
  EXPECT_EQ(OnednnPooling::create(max, {3, 8, 8}, {64, 8, 1}, {4, 4}), nullptr);
  // Neither NCHW nor NHWC (H and W swapped).
  EXPECT_EQ(OnednnPooling::create(max, {1, 3, 8, 8}, {192, 64, 1, 8}, {4, 4}),
            nullptr);
  // The window does not give the output size asked for.
  EXPECT_EQ(OnednnPooling::create(max, {1, 3, 8, 8}, {192, 64, 8, 1}, {3, 4}),
            nullptr);
  // An empty input, a zero stride, negative padding.
  EXPECT_EQ(OnednnPooling::create(max, {0, 3, 8, 8}, {192, 64, 8, 1}, {4, 4}),
            nullptr);
  auto bad = max;
  bad.stride = {0, 2};
  EXPECT_EQ(OnednnPooling::create(bad, {1, 3, 8, 8}, {192, 64, 8, 1}, {4, 4}),
            nullptr);
  bad = max;
  bad.pad_end = {-1, 0};
  EXPECT_EQ(OnednnPooling::create(bad, {1, 3, 8, 8}, {192, 64, 8, 1}, {4, 4}),
            nullptr);
}

TEST(OnednnPooling, FitsOnlyThePlannedSizesAndLayout) {
  const at::Tensor x = at::randn({1, 4, 8, 8});
  auto pool =
      OnednnPooling::create(window(PoolingWindow::Kind::kMax, 2, 2, 0, 0),
                            x.sizes().vec(), x.strides().vec(), {4, 4});
  ASSERT_NE(pool, nullptr);
  EXPECT_TRUE(pool->fits(x));
  EXPECT_FALSE(pool->fits(x.contiguous(at::MemoryFormat::ChannelsLast)));
  EXPECT_FALSE(pool->fits(at::randn({1, 4, 8, 9})));
  EXPECT_FALSE(pool->fits(x.to(at::kDouble)));
  EXPECT_FALSE(pool->fits(at::Tensor()));
}

}  // namespace
}  // namespace fx
