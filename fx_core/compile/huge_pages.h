// Memory on transparent huge pages for what the InferencePlan keeps for its
// lifetime and reads on every run: oneDNN's prepacked weights and the
// planned result buffers.
//
// Why: at batch 1 a forward streams every weight once (resnet50: 100 MB)
// and walks megabytes of activations, so with 4 KiB pages it misses the TLB
// tens of thousands of times per run. Debian leaves transparent huge pages
// to programs that ask (`madvise` in /sys/kernel/mm/transparent_hugepage/
// enabled). Measured on this machine (fx exec --engine inference_plan,
// FX_HUGE_PAGES=1 and =0 alternating, median of 40 runs each): resnet50
// 52.6-53.2 against 57.1-58.8 ms at 1 thread (five pairs) and 27.7-27.9
// against 28.8-30.7 ms at 2 threads; mobilenet_v3_large at 2 threads
// 2.69-2.86 against 2.83-3.05 ms.
//
// Blocks are carved from slabs of at least 32 MiB, 2 MiB-aligned, mapped
// with mmap and advised MADV_HUGEPAGE (the kernel may still back them with
// small pages: nothing depends on it). A block is 64-byte aligned; its slab
// is unmapped once the arena has moved on and every block in it is freed.
// Blocks under 64 KiB, and every block when the environment variable
// FX_HUGE_PAGES=0 is set (read once), come from the ordinary allocator.
// Thread-safe.
#ifndef FX_CORE_COMPILE_HUGE_PAGES_H_
#define FX_CORE_COMPILE_HUGE_PAGES_H_

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "fx_core/compile/tensor_meta.h"

namespace fx {

// `bytes` of uninitialized memory, freed when the last copy is dropped.
// Throws std::bad_alloc when none can be mapped.
std::shared_ptr<void> allocate_on_huge_pages(size_t bytes);

// An uninitialized CPU tensor of `meta`'s layout whose memory comes from
// allocate_on_huge_pages (at::empty_strided's for small ones).
at::Tensor empty_on_huge_pages(const TensorMeta& meta);

// Whether blocks go on huge pages in this process (FX_HUGE_PAGES).
bool huge_pages_enabled();

// While one lives on a thread, allocate_on_huge_pages on that thread maps
// each block of 64 KiB or more on its own (2 MiB-aligned, advised for huge
// pages, unmapped when dropped) instead of carving it from the arena, whose
// slabs stay mapped while any block in them lives and never reuse a freed
// block: for memory that lives briefly, such as the candidate convolutions
// conv_choice times and drops. Scopes nest.
class TransientBlocksScope {
 public:
  TransientBlocksScope();
  ~TransientBlocksScope();
  TransientBlocksScope(const TransientBlocksScope&) = delete;
  TransientBlocksScope& operator=(const TransientBlocksScope&) = delete;

 private:
  bool previous_;
};

}  // namespace fx

#endif  // FX_CORE_COMPILE_HUGE_PAGES_H_
