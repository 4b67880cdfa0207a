// torch 1.13's dtype, device, layout and memory_format names.
#include "fx_core/ir/torch_names.h"

#include <gtest/gtest.h>

namespace fx {
namespace {

TEST(TorchNames, Dtypes) {
  for (const char* name : {"torch.float32", "torch.float", "torch.bfloat16",
                           "torch.quint2x4", "torch.bool", "torch.long"}) {
    EXPECT_TRUE(is_dtype_name(name)) << name;
  }
  for (const char* name :
       {"float32", "torch.float33", "torch.Tensor", "", "torch.float32 "}) {
    EXPECT_FALSE(is_dtype_name(name)) << name;
  }
}

TEST(TorchNames, DevicesAsTorchDeviceParsesThem) {
  for (const char* name : {"cpu", "cuda", "cuda:0", "cuda:127", "meta", "mps",
                           "cpu:0", "privateuseone:3"}) {
    EXPECT_TRUE(is_device_name(name)) << name;
  }
  // torch.device refuses these too (cuda:128 wraps to cuda:-128 there).
  for (const char* name : {"gpu", "cuda:", "cuda:01", "cuda:-1", "cuda:128",
                           " cpu", "cpu:0:0", "CUDA", ""}) {
    EXPECT_FALSE(is_device_name(name)) << name;
  }
}

TEST(TorchNames, LayoutsAndMemoryFormats) {
  EXPECT_TRUE(is_layout_name("torch.strided"));
  EXPECT_TRUE(is_layout_name("torch.sparse_bsc"));
  EXPECT_FALSE(is_layout_name("torch.dense"));
  EXPECT_TRUE(is_memory_format_name("torch.channels_last_3d"));
  EXPECT_TRUE(is_memory_format_name("torch.preserve_format"));
  EXPECT_FALSE(is_memory_format_name("torch.channels_first"));
  EXPECT_FALSE(is_memory_format_name("torch.strided"));
}

}  // namespace
}  // namespace fx
