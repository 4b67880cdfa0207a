#include "fx_core/compile/huge_pages.h"

#include <ATen/ATen.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

namespace fx {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kSlab = size_t{32} << 20;
constexpr size_t kAlign = 64;
constexpr size_t kSmall = size_t{64} << 10;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// A 2 MiB-aligned mapping of `size` bytes advised for huge pages; unmapped
// when the last owner drops it.
std::shared_ptr<char> map_slab(size_t size) {
  const size_t mapped = size + kHugePage;
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  const auto base = reinterpret_cast<uintptr_t>(p);
  char* aligned = reinterpret_cast<char*>(round_up(base, kHugePage));
  madvise(aligned, size, MADV_HUGEPAGE);  // advice: failure is harmless
  return std::shared_ptr<char>(aligned,
                               [p, mapped](char*) { munmap(p, mapped); });
}

class Arena {
 public:
  std::shared_ptr<void> allocate(size_t bytes) {
    bytes = round_up(std::max<size_t>(bytes, 1), kAlign);
    std::lock_guard<std::mutex> lock(mu_);
    if (slab_ == nullptr || used_ + bytes > slab_size_) {
      slab_size_ = std::max(kSlab, round_up(bytes, kHugePage));
      slab_ = map_slab(slab_size_);
      used_ = 0;
    }
    void* block = slab_.get() + used_;
    used_ += bytes;
    return std::shared_ptr<void>(slab_, block);  // keeps the slab mapped
  }

 private:
  std::mutex mu_;
  std::shared_ptr<char> slab_;
  size_t slab_size_ = 0, used_ = 0;
};

Arena& arena() {
  static Arena* a = new Arena();  // never destroyed: blocks may outlive main
  return *a;
}

thread_local bool transient_blocks = false;

}  // namespace

bool huge_pages_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("FX_HUGE_PAGES");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return enabled;
}

TransientBlocksScope::TransientBlocksScope() : previous_(transient_blocks) {
  transient_blocks = true;
}

TransientBlocksScope::~TransientBlocksScope() { transient_blocks = previous_; }

std::shared_ptr<void> allocate_on_huge_pages(size_t bytes) {
  if (bytes >= kSmall && huge_pages_enabled()) {
    if (transient_blocks) return map_slab(round_up(bytes, kHugePage));
    return arena().allocate(bytes);
  }
  void* p =
      std::aligned_alloc(kAlign, round_up(std::max<size_t>(bytes, 1), kAlign));
  if (p == nullptr) throw std::bad_alloc();
  return std::shared_ptr<void>(p, std::free);
}

at::Tensor empty_on_huge_pages(const TensorMeta& meta) {
  const size_t bytes = meta.nbytes();
  const auto options = at::TensorOptions().dtype(meta.dtype);
  if (bytes < kSmall || !huge_pages_enabled()) {
    return at::empty_strided(meta.sizes, meta.strides, options);
  }
  std::shared_ptr<void> block = allocate_on_huge_pages(bytes);
  void* data = block.get();
  return at::from_blob(
      data, meta.sizes, meta.strides, [block](void*) mutable { block.reset(); },
      options);
}

}  // namespace fx
