#include "fx_core/compile/buffer_pool.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "fx_core/compile/huge_pages.h"

namespace fx {

AliasGroups::AliasGroups(size_t num_slots) : parent_(num_slots) {
  for (size_t i = 0; i < num_slots; ++i) parent_[i] = static_cast<int32_t>(i);
}

int32_t AliasGroups::find(int32_t x) {
  while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
  return x;
}

void AliasGroups::unite(int32_t a, int32_t b) {
  const int32_t root_b = find(b);
  parent_[find(a)] = root_b;
}

namespace {

// `bytes` on huge pages as a storage.
c10::Storage storage_on_huge_pages(size_t bytes) {
  auto* block = new std::shared_ptr<void>(allocate_on_huge_pages(bytes));
  c10::DataPtr data(
      block->get(), block,
      [](void* b) { delete static_cast<std::shared_ptr<void>*>(b); },
      c10::kCPU);
  return c10::Storage(c10::Storage::use_byte_size_t(), bytes, std::move(data),
                      nullptr, /*resizable=*/false);
}

}  // namespace

at::Tensor SharedBuffers::view(size_t k, const TensorMeta& meta) {
  const size_t bytes = std::max<size_t>(meta.nbytes(), 1);
  if (k == blocks_.size())
    blocks_.push_back({storage_on_huge_pages(bytes), {}});
  Block& block = blocks_[k];
  if (block.storage.nbytes() < bytes) {
    block.storage = storage_on_huge_pages(bytes);
    for (at::Tensor& v : block.views) {
      v.unsafeGetTensorImpl()->set_storage_keep_dtype(block.storage);
    }
    ++generation_;
  }
  at::Tensor t = at::empty({0}, at::TensorOptions().dtype(meta.dtype));
  t.set_(block.storage, 0, meta.sizes, meta.strides);
  block.views.push_back(t);
  return t;
}

size_t SharedBuffers::bytes() const {
  size_t n = 0;
  for (const Block& b : blocks_) n += b.storage.nbytes();
  return n;
}

std::vector<size_t>::iterator BufferPool::find_free(const TensorMeta& meta) {
  auto it = std::find_if(free_.begin(), free_.end(), [&](size_t b) {
    return pool_[b].meta.same_layout(meta);
  });
  if (it != free_.end()) return it;
  const size_t need = std::max<size_t>(meta.nbytes(), 1);
  size_t room = 0;
  for (auto f = free_.begin(); f != free_.end(); ++f) {
    const size_t have = pool_[*f].tensor.storage().nbytes();
    if (have >= need && (it == free_.end() || have < room)) {
      it = f;
      room = have;
    }
  }
  return it;
}

// Buffer b's memory seen with `meta`'s sizes, strides and dtype (it has
// room: find_free).
at::Tensor BufferPool::view_of(size_t b, const TensorMeta& meta) const {
  if (shared_) return shared_->view(b, meta);
  at::Tensor t = at::empty({0}, at::TensorOptions().dtype(meta.dtype));
  t.set_(pool_[b].tensor.storage(), 0, meta.sizes, meta.strides);
  return t;
}

at::Tensor BufferPool::take(const TensorMeta& meta, int32_t group,
                            size_t* bytes) {
  auto it = find_free(meta);
  size_t b;
  if (it != free_.end()) {
    b = *it;
    free_.erase(it);
    if (!pool_[b].meta.same_layout(meta)) pool_[b] = {meta, view_of(b, meta)};
  } else {
    b = pool_.size();
    pool_.push_back(
        {meta, shared_ ? shared_->view(b, meta) : empty_on_huge_pages(meta)});
    *bytes += meta.nbytes();
  }
  group_buffers_[group].push_back(b);
  return pool_[b].tensor;
}

bool BufferPool::transfer(const at::Tensor& buffer, int32_t from, int32_t to) {
  std::vector<size_t>& owned = group_buffers_[from];
  for (auto it = owned.begin(); it != owned.end(); ++it) {
    if (pool_[*it].tensor.is_same(buffer)) {
      group_buffers_[to].push_back(*it);
      owned.erase(it);
      return true;
    }
  }
  return false;
}

void BufferPool::release_group(int32_t group) {
  for (size_t b : group_buffers_[group]) free_.push_back(b);
}

std::vector<at::Tensor> BufferPool::tensors() const {
  std::vector<at::Tensor> all;
  all.reserve(pool_.size());
  for (const Buffer& b : pool_) all.push_back(b.tensor);
  return all;
}

}  // namespace fx
