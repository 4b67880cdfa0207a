// fx::tensor_outside_storage: a tensor's elements against its storage.
#include "fx_core/io/tensor_bounds.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace fx {
namespace {

// A float tensor over `storage_floats` floats with the given view.
at::Tensor view_over(int64_t storage_floats, int64_t offset,
                     std::vector<int64_t> sizes, std::vector<int64_t> strides) {
  at::Tensor t = at::zeros({storage_floats});
  t.unsafeGetTensorImpl()->set_storage_offset(offset);
  t.unsafeGetTensorImpl()->set_sizes_and_strides(sizes, strides);
  return t;
}

TEST(TensorBounds, ViewsInsideTheStorageAreAccepted) {
  EXPECT_EQ(tensor_outside_storage(at::zeros({2, 3})), "");
  EXPECT_EQ(tensor_outside_storage(at::zeros({2, 3}).t()), "");
  EXPECT_EQ(tensor_outside_storage(view_over(6, 5, {1}, {1})), "");
  EXPECT_EQ(tensor_outside_storage(view_over(1, 0, {1000}, {0})), "");
  EXPECT_EQ(tensor_outside_storage(view_over(0, 7, {0, 5}, {5, 1})), "");
  EXPECT_EQ(tensor_outside_storage(at::scalar_tensor(1.0)), "");
}

TEST(TensorBounds, ViewsReachingOutAreRefusedWithTheirShape) {
  EXPECT_EQ(tensor_outside_storage(view_over(6, 6, {1}, {1})),
            "storage offset 6, sizes [1] and strides [1] of 4-byte elements "
            "need 28 bytes; the storage holds 24");
  EXPECT_EQ(tensor_outside_storage(view_over(2, 0, {4096}, {1})),
            "storage offset 0, sizes [4096] and strides [1] of 4-byte "
            "elements need 16384 bytes; the storage holds 8");
  EXPECT_EQ(tensor_outside_storage(
                view_over(2, 0, {2, 2}, {INT64_MAX / 2, INT64_MAX / 2})),
            "storage offset 0, sizes [2, 2] and strides [4611686018427387903, "
            "4611686018427387903] of 4-byte elements need more than 2^64 "
            "bytes; the storage holds 8");
}

}  // namespace
}  // namespace fx
