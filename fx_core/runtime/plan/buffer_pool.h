// The InferencePlan's buffer planning: which values may share memory
// (AliasGroups) and the result buffers allocated ahead for them
// (BufferPool).
//
// AliasGroups is a union-find over a plan's value slots: values the planner
// cannot prove separate (a registry kernel's result and its tensor
// arguments: views, in-place ops) are in one group, and a group is live
// until the last step reading any of its values.
//
// BufferPool hands out buffers by layout: take() reuses a free buffer of the
// same sizes, strides and dtype or allocates one (on huge pages,
// huge_pages.h); the buffers a group took
// return to the free list when release_group() is called after the group's
// last use; transfer() hands one over to another group (a result written
// into a dead operand's buffer). Planning only: nothing here runs per
// inference.
#ifndef FX_CORE_RUNTIME_PLAN_BUFFER_POOL_H_
#define FX_CORE_RUNTIME_PLAN_BUFFER_POOL_H_

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fx_core/runtime/plan/tensor_meta.h"

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

class BufferPool {
 public:
  explicit BufferPool(size_t num_groups) : group_buffers_(num_groups) {}

  // A buffer of `meta`'s layout for `group`: a free one, or a new one
  // (adding its bytes to *bytes).
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
  std::vector<Buffer> pool_;
  std::vector<size_t> free_;  // indices into pool_
  std::vector<std::vector<size_t>> group_buffers_;
};

}  // namespace fx

#endif  // FX_CORE_RUNTIME_PLAN_BUFFER_POOL_H_
