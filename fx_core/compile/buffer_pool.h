// The InferencePlan's buffer planning: which values may share memory
// (AliasGroups) and the result buffers allocated ahead for them
// (BufferPool).
//
// AliasGroups is a union-find over a plan's value slots: values the planner
// cannot prove separate (a registry kernel's result and its tensor
// arguments: views, in-place ops) are in one group, and a group is live
// until the last step reading any of its values.
//
// BufferPool hands out buffers: take() reuses a free buffer of the same
// sizes, strides and dtype, else the smallest free one with room for the
// bytes (seen in the new layout), else allocates one (on huge pages,
// huge_pages.h; a dynamic plan's come from its SharedBuffers). Reusing
// memory across layouts lets a network's large early buffers serve its
// later, smaller values: fewer bytes stay in use and more of them in the
// caches (mnasnet1_0 at batch 1: 27 buffers, 13.9 MB before, 3 buffers,
// 5.6 MB after, and 5% faster; BENCHMARKS.md). The buffers a group took
// return to the free list when release_group() is called after the group's
// last use; transfer() hands one over to another group (a result written
// into a dead operand's buffer). Planning only: nothing here runs per
// inference (SharedBuffers grows when a new shape is planned).
#ifndef FX_CORE_COMPILE_BUFFER_POOL_H_
#define FX_CORE_COMPILE_BUFFER_POOL_H_

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fx_core/compile/tensor_meta.h"

namespace fx {

class AliasGroups {
 public:
  explicit AliasGroups(size_t num_slots);
  int32_t find(int32_t x);
  void unite(int32_t a, int32_t b);
  bool is_root(size_t x) const { return parent_[x] == static_cast<int32_t>(x); }

 private:
  std::vector<int32_t> parent_;
};

// Memory for the buffers of a dynamic plan's shape specialisations, which
// run one at a time: a specialisation's k-th buffer lives in block k, as
// large as the largest k-th buffer of any shape met so far. When a new
// shape needs a block to grow, every buffer in it moves to the new block
// (its TensorImpl's storage is replaced, so every handle on it follows) and
// generation() changes: a plan whose TensorIterators cached the old data
// pointers re-points them before its next run.
class SharedBuffers {
 public:
  // A buffer of `meta`'s layout at the start of block k (k <= blocks()).
  at::Tensor view(size_t k, const TensorMeta& meta);
  uint64_t generation() const { return generation_; }
  size_t blocks() const { return blocks_.size(); }
  size_t bytes() const;  // every block's size

 private:
  struct Block {
    c10::Storage storage;
    std::vector<at::Tensor> views;
  };
  std::vector<Block> blocks_;
  uint64_t generation_ = 0;
};

class BufferPool {
 public:
  // New buffers come from `shared` when given (block k for the k-th), else
  // each from its own allocation.
  explicit BufferPool(size_t num_groups, SharedBuffers* shared = nullptr)
      : group_buffers_(num_groups), shared_(shared) {}

  // A buffer of `meta`'s layout for `group`: a free one (of that layout,
  // else the smallest with room), or a new one (adding its bytes to *bytes).
  at::Tensor take(const TensorMeta& meta, int32_t group, size_t* bytes);
  // Hands `buffer`, taken by group `from`, over to group `to`; false when
  // `from` does not hold it.
  bool transfer(const at::Tensor& buffer, int32_t from, int32_t to);
  // `group`'s buffers are free again (its values are dead).
  void release_group(int32_t group);
  // Every buffer allocated.
  std::vector<at::Tensor> tensors() const;

 private:
  struct Buffer {
    TensorMeta meta;
    at::Tensor tensor;
  };
  // The free buffer for `meta`: one of its layout, else the smallest with
  // room for its bytes; free_.end() when none is.
  std::vector<size_t>::iterator find_free(const TensorMeta& meta);
  at::Tensor view_of(size_t b, const TensorMeta& meta) const;

  std::vector<Buffer> pool_;
  std::vector<size_t> free_;  // indices into pool_
  std::vector<std::vector<size_t>> group_buffers_;
  SharedBuffers* shared_;
};

}  // namespace fx

#endif  // FX_CORE_COMPILE_BUFFER_POOL_H_
