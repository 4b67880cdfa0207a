// fx::allocate_on_huge_pages / empty_on_huge_pages: the layouts asked for,
// 64-byte alignment, large blocks in mappings advised MADV_HUGEPAGE (the
// kernel's "hg" flag in /proc/self/smaps), small ones from the ordinary
// allocator, and memory that stays valid as long as a tensor holds it.
#include "fx_core/compile/huge_pages.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fx {
namespace {

// The VmFlags line of the mapping holding `p`, from /proc/self/smaps.
std::string vm_flags_of(const void* p) {
  const auto addr = reinterpret_cast<uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= addr && addr < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

bool advised_huge(const void* p) {
  return (vm_flags_of(p) + " ").find(" hg ") != std::string::npos;
}

TEST(HugePages, LargeTensorsHaveTheirLayoutAndAdvisedMemory) {
  ASSERT_TRUE(huge_pages_enabled());  // FX_HUGE_PAGES is not set in tests
  // 1x256x56x56 float32, channels_last: 3.2 MB.
  at::Tensor like =
      at::empty({1, 256, 56, 56}).contiguous(at::MemoryFormat::ChannelsLast);
  at::Tensor t = empty_on_huge_pages(TensorMeta::of(like));
  EXPECT_EQ(t.sizes(), like.sizes());
  EXPECT_EQ(t.strides(), like.strides());
  EXPECT_EQ(t.scalar_type(), at::kFloat);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64, 0u);
  EXPECT_TRUE(advised_huge(t.data_ptr())) << vm_flags_of(t.data_ptr());
  at::Tensor values = at::arange(t.numel(), at::kFloat).view(t.sizes());
  t.copy_(values);
  EXPECT_TRUE(at::equal(t, values));
}

TEST(HugePages, SmallTensorsComeFromTheOrdinaryAllocator) {
  at::Tensor t =
      empty_on_huge_pages(TensorMeta::of(at::empty({4, 8}, at::kDouble)));
  EXPECT_EQ(t.sizes(), (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(t.scalar_type(), at::kDouble);
  EXPECT_FALSE(advised_huge(t.data_ptr()));
  at::Tensor empty = empty_on_huge_pages(TensorMeta::of(at::empty({0, 3})));
  EXPECT_EQ(empty.numel(), 0);
}

TEST(HugePages, BlocksAreAlignedAndOutliveTheirSlabsTurn) {
  // A block larger than a slab gets a slab of its own, 2 MiB-aligned.
  std::shared_ptr<void> big = allocate_on_huge_pages(size_t{40} << 20);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big.get()) % (size_t{2} << 20), 0u);
  EXPECT_TRUE(advised_huge(big.get()));
  // Many blocks, each 64-byte aligned and disjoint; the first stays
  // readable after later slabs were started.
  std::shared_ptr<void> first = allocate_on_huge_pages(100000);
  static_cast<unsigned char*>(first.get())[99999] = 0xAB;
  std::vector<std::shared_ptr<void>> blocks;
  for (int i = 0; i < 64; ++i) {
    blocks.push_back(allocate_on_huge_pages(1 << 20));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(blocks.back().get()) % 64, 0u);
    std::memset(blocks.back().get(), i, 1 << 20);
  }
  std::vector<char*> starts;
  for (const auto& b : blocks) starts.push_back(static_cast<char*>(b.get()));
  std::sort(starts.begin(), starts.end());
  for (size_t i = 1; i < starts.size(); ++i) {
    EXPECT_GE(starts[i] - starts[i - 1], 1 << 20) << "blocks overlap";
  }
  blocks.clear();
  EXPECT_EQ(static_cast<unsigned char*>(first.get())[99999], 0xAB);
}

// Under a TransientBlocksScope each large block is a mapping of its own,
// advised for huge pages and unmapped when dropped; outside one, blocks
// come from the arena, whose current slab stays mapped.
TEST(HugePages, TransientBlocksAreUnmappedWhenDropped) {
  if (!huge_pages_enabled()) GTEST_SKIP() << "FX_HUGE_PAGES=0";
  const void* where = nullptr;
  {
    TransientBlocksScope transient;
    std::shared_ptr<void> block = allocate_on_huge_pages(size_t{3} << 20);
    where = block.get();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(where) % (size_t{2} << 20), 0u);
    EXPECT_TRUE(advised_huge(where));
    std::memset(block.get(), 1, size_t{3} << 20);
    // Small blocks still come from the ordinary allocator.
    EXPECT_FALSE(advised_huge(allocate_on_huge_pages(1000).get()));
  }
  EXPECT_EQ(vm_flags_of(where), "") << "the dropped block is still mapped";
  std::shared_ptr<void> from_arena = allocate_on_huge_pages(size_t{1} << 20);
  const void* arena_block = from_arena.get();
  from_arena.reset();
  EXPECT_NE(vm_flags_of(arena_block), "");
}

}  // namespace
}  // namespace fx
