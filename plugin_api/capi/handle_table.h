// fx::host::internal::HandleTable: the values of the C ABI's FxGraph* and
// FxNode* handles. A handle is not the object's address but a slot number
// with a generation (and a tag for its kind), so that a handle kept after
// its object was destroyed (a graph rolled back by the pass manager,
// replaced, or released and freed; a purged node) is recognised as stale
// and refused, never followed into freed memory, even when a new object
// now lives at the old address.
//
// Contract:
//  - handle_of(object) gives the object's handle, the same one each time
//    while the object lives. The object keeps its slot number as its
//    external slot (Node/Graph::external_slot()), so this is a field read
//    after the first time.
//  - object_of(handle) gives the object, or nullptr with `why` set when
//    the handle is stale (its object was destroyed), of another kind (an
//    FxNode* passed as an FxGraph*), or no handle at all (a made-up
//    pointer). NULL maps to NULL with kNull. No lock is taken.
//  - When an object with a slot is destroyed (the table is the process's
//    LifetimeListener) its slot's generation advances, so every handle to
//    it turns stale for good (32-bit generations; a freed slot is reused
//    only after every slot freed before it).
//  - Handing out a slot for the first time and freeing one take a lock;
//    reads from several threads are safe, as are handles made on several
//    threads. At most 2**24 - 1 objects hold a slot at once (bad_alloc).
#ifndef PLUGIN_API_CAPI_HANDLE_TABLE_H_
#define PLUGIN_API_CAPI_HANDLE_TABLE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "fx_core/ir/lifetime_listener.h"

namespace fx::host::internal {

enum class HandleKind : uint8_t { kGraph = 0x47, kNode = 0x4e };

enum class HandleState { kNull, kLive, kStale, kWrongKind, kUnknown };

class HandleTable final : public LifetimeListener {
 public:
  static HandleTable& instance() {
    HandleTable* t = the_table.load(std::memory_order_acquire);
    return t != nullptr ? *t : create();
  }

  // Objects are Graph or Node (of fx_core/ir): anything with
  // external_slot() / set_external_slot().
  template <typename Object>
  uintptr_t handle_of(const Object* object, HandleKind kind) {
    if (object == nullptr) return 0;
    if (object->external_slot() == 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      // Checked again under the lock: two threads handing out the same
      // object for the first time get one slot.
      if (object->external_slot() == 0) {
        object->set_external_slot(allocate(object, kind));
      }
    }
    return pack(object->external_slot());
  }
  inline const void* object_of(uintptr_t handle, HandleKind kind,
                               HandleState* why) const;

  void node_destroyed(const Node* node) noexcept override;
  void graph_destroyed(const Graph* graph) noexcept override;

 private:
  HandleTable() = default;
  static HandleTable& create();
  static std::atomic<HandleTable*> the_table;
  // Bits 63..40 of a handle: the slot number (never 0, so no handle is
  // NULL); 39..32: the kind's tag; 31..0: the slot's generation.
  static constexpr int kSlotShift = 40;
  static constexpr int kKindShift = 32;
  struct Slot {
    std::atomic<const void*> object{nullptr};
    std::atomic<uint32_t> generation{0};
    std::atomic<uint8_t> kind{0};
  };
  static constexpr int kChunkBits = 16;
  static constexpr size_t kChunkSize = size_t{1} << kChunkBits;
  static constexpr size_t kMaxChunks = 255;  // slot numbers fit 24 bits

 public:
  static constexpr size_t kMaxSlots = kMaxChunks * kChunkSize;

 private:

  // nullptr when never allocated.
  Slot* slot(uint32_t number) const {
    size_t chunk = number >> kChunkBits;
    if (chunk >= kMaxChunks) return nullptr;
    Slot* slots = chunks_[chunk].load(std::memory_order_acquire);
    return slots == nullptr ? nullptr : &slots[number & (kChunkSize - 1)];
  }
  uintptr_t pack(uint32_t number) const {
    const Slot& s = *slot(number);
    return uint64_t{number} << kSlotShift |
           uint64_t{s.kind.load(std::memory_order_relaxed)} << kKindShift |
           s.generation.load(std::memory_order_relaxed);
  }
  // A free slot holding `object`; the caller holds mutex_.
  uint32_t allocate(const void* object, HandleKind kind);
  void release(uint32_t number) noexcept;

  std::array<std::atomic<Slot*>, kMaxChunks> chunks_{};
  std::mutex mutex_;  // allocation and the free queue
  uint32_t next_ = 1;  // slot numbers start at 1 (0: no slot)
  std::vector<uint32_t> free_;  // a ring: reused oldest first
  size_t free_head_ = 0;
};

const void* HandleTable::object_of(uintptr_t handle, HandleKind kind,
                                   HandleState* why) const {
  *why = HandleState::kNull;
  if (handle == 0) return nullptr;
  auto number = static_cast<uint32_t>(handle >> kSlotShift);
  auto tag = static_cast<uint8_t>(handle >> kKindShift);
  auto generation = static_cast<uint32_t>(handle);
  bool tagged = tag == static_cast<uint8_t>(HandleKind::kGraph) ||
                tag == static_cast<uint8_t>(HandleKind::kNode);
  const Slot* s = tagged && number != 0 ? slot(number) : nullptr;
  if (s == nullptr) {
    *why = HandleState::kUnknown;
    return nullptr;
  }
  if (tag != static_cast<uint8_t>(kind)) {
    *why = HandleState::kWrongKind;
    return nullptr;
  }
  const void* object = s->object.load(std::memory_order_acquire);
  if (object == nullptr ||
      s->generation.load(std::memory_order_acquire) != generation ||
      s->kind.load(std::memory_order_relaxed) != tag) {
    *why = HandleState::kStale;
    return nullptr;
  }
  *why = HandleState::kLive;
  return object;
}

}  // namespace fx::host::internal

#endif  // PLUGIN_API_CAPI_HANDLE_TABLE_H_
