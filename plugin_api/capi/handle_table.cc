#include "plugin_api/capi/handle_table.h"

#include <new>

#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"

namespace fx::host::internal {

static_assert(sizeof(uintptr_t) == 8, "handles pack 64 bits");
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
  s.kind.store(static_cast<uint8_t>(kind), std::memory_order_relaxed);
  s.object.store(object, std::memory_order_release);
  return number;
}

void HandleTable::release(uint32_t number) noexcept {
  Slot* s = slot(number);
  if (s == nullptr) return;
  s->generation.fetch_add(1, std::memory_order_acq_rel);
  s->object.store(nullptr, std::memory_order_release);
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    free_.push_back(number);
  } catch (...) {  // out of memory: the slot is simply never reused
  }
}

void HandleTable::node_destroyed(const Node* node) noexcept {
  release(node->external_slot());
}

void HandleTable::graph_destroyed(const Graph* graph) noexcept {
  release(graph->external_slot());
}

}  // namespace fx::host::internal
