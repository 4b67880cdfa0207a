#include "host/handles/handle_table.h"

#include <new>

#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"

namespace fx::host::internal {

static_assert(sizeof(uintptr_t) == 8, "handles pack 64 bits");
static_assert(HandleTable::kMaxSlots <= (size_t{1} << 24),
              "a slot number must fit 24 bits (handles, lists of loans)");
static_assert(HandleTable::kMaxSlots <= Node::kMaxExternalSlot,
              "a slot number must fit a node's external slot");

std::atomic<HandleTable*> HandleTable::the_table{nullptr};

HandleTable& HandleTable::create() {
  static HandleTable* table = [] {
    auto* t = new HandleTable();  // never destroyed: objects may outlive main
    set_lifetime_listener(t);
    the_table.store(t, std::memory_order_release);
    return t;
  }();
  return *table;
}

uint32_t HandleTable::allocate(const void* object, HandleKind kind) {
  uint32_t number;
  if (free_head_ < free_.size()) {
    number = free_[free_head_++];
    if (free_head_ == free_.size()) free_.clear(), free_head_ = 0;
  } else {
    size_t chunk = next_ >> kChunkBits;
    if (chunk >= kMaxChunks) throw std::bad_alloc();
    if (chunks_[chunk].load(std::memory_order_relaxed) == nullptr) {
      chunks_[chunk].store(new Slot[kChunkSize], std::memory_order_release);
    }
    number = next_++;
  }
  Slot& s = *slot(number);
  // No borrowed slots yet: release() emptied the list.
  s.tag_and_first.store(uint32_t{static_cast<uint8_t>(kind)} << 24,
                        std::memory_order_relaxed);
  s.object.store(object, std::memory_order_release);
  return number;
}

void HandleTable::release(uint32_t number) noexcept {
  Slot* s = number == 0 ? nullptr : slot(number);
  if (s == nullptr) return;
  s->generation.fetch_add(1, std::memory_order_acq_rel);
  s->object.store(nullptr, std::memory_order_release);
  // What was borrowed from it goes with it (the list is detached first, so
  // a reuse of this slot starts with none).
  uint32_t borrowed =
      s->tag_and_first.fetch_and(~kFirstMask, std::memory_order_acq_rel) &
      kFirstMask;
  while (borrowed != 0) {
    uint32_t next = loan(borrowed)->next.load(std::memory_order_acquire);
    release(borrowed);
    borrowed = next;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    free_.push_back(number);
  } catch (...) {  // out of memory: the slot is simply never reused
  }
}

uint32_t HandleTable::find_borrowed(uint32_t number, uintptr_t owner,
                                    uint64_t step) const {
  uint32_t b =
      slot(number)->tag_and_first.load(std::memory_order_acquire) & kFirstMask;
  while (b != 0) {
    const Loan& l = *loan(b);
    if (l.step.load(std::memory_order_relaxed) == step &&
        l.owner.load(std::memory_order_relaxed) == owner) {
      return b;
    }
    b = l.next.load(std::memory_order_acquire);
  }
  return 0;
}

uint32_t HandleTable::link_borrowed(uint32_t number, uintptr_t owner,
                                    uint64_t step) {
  uint32_t b = allocate(nullptr, HandleKind::kArgRef);
  size_t chunk = b >> kChunkBits;
  if (loans_[chunk].load(std::memory_order_relaxed) == nullptr) {
    loans_[chunk].store(new Loan[kChunkSize], std::memory_order_release);
  }
  Slot& s = *slot(b);
  Loan& l = *loan(b);
  l.owner.store(owner, std::memory_order_relaxed);
  l.step.store(step, std::memory_order_relaxed);
  s.object.store(&s, std::memory_order_release);
  // Pushed on the owner's list; release() may empty it meanwhile (it takes
  // no lock), hence the exchange loop.
  std::atomic<uint32_t>& head = slot(number)->tag_and_first;
  uint32_t now = head.load(std::memory_order_relaxed);
  do {
    l.next.store(now & kFirstMask, std::memory_order_relaxed);
  } while (!head.compare_exchange_weak(now, (now & ~kFirstMask) | b,
                                       std::memory_order_acq_rel));
  return b;
}

uintptr_t HandleTable::borrowed_of(uintptr_t owner, Step step) {
  auto number = static_cast<uint32_t>(owner >> kSlotShift);
  uint64_t packed = pack_step(step);
  uint32_t b = find_borrowed(number, owner, packed);
  if (b == 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    b = find_borrowed(number, owner, packed);  // made by another thread?
    if (b == 0) b = link_borrowed(number, owner, packed);
  }
  return pack(b);
}

void HandleTable::node_destroyed(const Node* node) noexcept {
  release(node->external_slot());
}

void HandleTable::graph_destroyed(const Graph* graph) noexcept {
  release(graph->external_slot());
}

}  // namespace fx::host::internal
