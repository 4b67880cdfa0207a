// fx::BufferPool: a free buffer of the requested layout is reused as it
// is; otherwise the smallest free buffer with room for the bytes is seen in
// the new layout (sizes, strides, dtype); only when none has room is memory
// allocated (and counted). A group's buffers are never handed out before the
// group is released. The same holds for a dynamic plan's SharedBuffers.
#include "fx_core/compile/buffer_pool.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <vector>

namespace fx {
namespace {

TensorMeta meta_of(const at::Tensor& t) { return TensorMeta::of(t); }

TensorMeta floats(std::vector<int64_t> sizes) {
  return meta_of(at::empty(sizes));
}

TEST(BufferPool, SameLayoutIsReusedAsItIs) {
  BufferPool pool(4);
  size_t bytes = 0;
  at::Tensor a = pool.take(floats({8, 16}), 0, &bytes);
  pool.release_group(0);
  at::Tensor b = pool.take(floats({8, 16}), 1, &bytes);
  EXPECT_TRUE(a.is_same(b));
  EXPECT_EQ(bytes, 8u * 16 * 4);
}

TEST(BufferPool, SmallerLayoutsShareTheSmallestBufferWithRoom) {
  BufferPool pool(8);
  size_t bytes = 0;
  at::Tensor big = pool.take(floats({64, 64}), 0, &bytes);    // 16 KB
  at::Tensor small = pool.take(floats({16, 16}), 1, &bytes);  // 1 KB
  ASSERT_EQ(bytes, (64u * 64 + 16 * 16) * 4);
  pool.release_group(0);
  pool.release_group(1);
  // 512 bytes: the 1 KB buffer, in the new sizes.
  at::Tensor v = pool.take(floats({2, 64}), 2, &bytes);
  EXPECT_EQ(v.data_ptr(), small.data_ptr());
  EXPECT_EQ(v.sizes(), at::IntArrayRef({2, 64}));
  // 4 KB and another dtype: the 16 KB one (the 1 KB one is taken).
  TensorMeta bytes_4k = meta_of(at::empty({4096}, at::kByte));
  at::Tensor u = pool.take(bytes_4k, 3, &bytes);
  EXPECT_EQ(u.data_ptr(), big.data_ptr());
  EXPECT_EQ(u.scalar_type(), at::kByte);
  // Nothing free has room: a new buffer, counted.
  at::Tensor w = pool.take(floats({8, 8}), 4, &bytes);
  EXPECT_NE(w.data_ptr(), big.data_ptr());
  EXPECT_NE(w.data_ptr(), small.data_ptr());
  EXPECT_EQ(bytes, (64u * 64 + 16 * 16 + 8 * 8) * 4);
  // Views write where the buffer's memory is.
  v.fill_(1.f);
  EXPECT_EQ(small.view({-1}).narrow(0, 0, 128).sum().item<float>(), 128.f);
  EXPECT_EQ(pool.tensors().size(), 3u);
}

TEST(BufferPool, StridedLayoutsNeedTheirWholeSpan) {
  BufferPool pool(4);
  size_t bytes = 0;
  at::Tensor a = pool.take(floats({4, 8}), 0, &bytes);  // 128 bytes
  pool.release_group(0);
  // channels_last 1x8x2x2 spans 32 floats: fits exactly.
  TensorMeta nhwc = meta_of(
      at::empty({1, 8, 2, 2}).contiguous(at::MemoryFormat::ChannelsLast));
  at::Tensor b = pool.take(nhwc, 1, &bytes);
  EXPECT_EQ(b.data_ptr(), a.data_ptr());
  EXPECT_TRUE(b.is_contiguous(at::MemoryFormat::ChannelsLast));
  pool.release_group(1);
  // A transposed 4x9 spans 36 floats: too many.
  at::Tensor c = pool.take(meta_of(at::empty({9, 4}).t()), 2, &bytes);
  EXPECT_NE(c.data_ptr(), a.data_ptr());
}

TEST(BufferPool, LiveGroupsKeepTheirBuffers) {
  BufferPool pool(4);
  size_t bytes = 0;
  at::Tensor a = pool.take(floats({32}), 0, &bytes);
  at::Tensor b = pool.take(floats({8}), 1, &bytes);
  EXPECT_NE(a.data_ptr(), b.data_ptr());
  pool.release_group(1);
  at::Tensor c = pool.take(floats({8}), 2, &bytes);
  EXPECT_EQ(c.data_ptr(), b.data_ptr());
  at::Tensor d = pool.take(floats({4}), 3, &bytes);  // group 0 is live
  EXPECT_NE(d.data_ptr(), a.data_ptr());
}

TEST(BufferPool, SharedBuffersServeOtherLayoutsFromTheirBlock) {
  SharedBuffers shared;
  BufferPool pool(4, &shared);
  size_t bytes = 0;
  at::Tensor a = pool.take(floats({16, 16}), 0, &bytes);
  pool.release_group(0);
  at::Tensor b = pool.take(floats({4, 8}), 1, &bytes);
  EXPECT_EQ(b.data_ptr(), a.data_ptr());
  EXPECT_EQ(shared.blocks(), 1u);
  EXPECT_EQ(shared.bytes(), 16u * 16 * 4);
}

}  // namespace
}  // namespace fx
