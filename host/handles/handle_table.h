// fx::host::internal::HandleTable: the values of the C ABI's FxGraph*,
// FxNode*, FxArg*, FxMatch*, FxValue*, FxSupport*, FxPartitions*,
// FxShapeEnv*, FxOptions*, FxRegistrar*, FxOpCall* and FxStatus* handles. A
// handle is not the object's address but a slot number with a generation (and a
// tag for its kind), so that a handle kept after its object was destroyed (a
// graph rolled back by the pass manager, replaced, or released and freed; a
// purged node; a released argument; a match or value after its callback)
// is recognised as stale and refused, never followed into freed memory,
// even when a new object now lives at the old address.
//
// Two sorts of slot:
//  - an object's slot (graph, node, owned argument, match, value) holds its
//    address;
//  - a borrowed slot (kArgRef: an argument a getter lends, such as a node's
//    args[1] or an item of a list) holds no address but where to find the
//    value: its owner's handle and one step (which field, which index).
//    Whoever reads it walks from the owner again, checking bounds, so a
//    borrowed handle is never a dangling pointer, whatever happened to the
//    owner's fields since. Borrowed slots hang off their owner's slot (one
//    per owner and step: asking twice gives the same handle) and turn stale
//    with it.
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
//  - borrowed_of(owner, step) gives the borrowed slot's handle (made the
//    first time); step_of(handle) gives back the owner and step of a live
//    borrowed handle. Freeing an owner's slot frees its borrowed slots
//    (and theirs).
//  - forget(object) frees the slot of an object that reports no
//    destruction (an owned argument, a match).
//  - Handing out a slot for the first time and freeing one take a lock;
//    reads from several threads are safe, as are handles made on several
//    threads. At most 2**24 - 1 objects hold a slot at once (bad_alloc).
#ifndef HOST_HANDLES_HANDLE_TABLE_H_
#define HOST_HANDLES_HANDLE_TABLE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "fx_core/ir/lifetime_listener.h"

namespace fx::host::internal {

enum class HandleKind : uint8_t {
  kGraph = 0x47,   // fx::Graph
  kNode = 0x4e,    // fx::Node
  kArg = 0x41,     // an argument owned by the plugin (OwnedArgument)
  kArgRef = 0x52,  // an argument borrowed from an owner: see above
  kMatch = 0x4d,   // FxMatch, for the duration of a callback
  kValue = 0x56,   // FxValue (and its items), for the duration of a callback
  // A node's args[i], kwargs[i] or meta[i] (i < 256), named without a slot
  // of its own: see direct_of().
  kNodeArgs = 0x61,
  kNodeKwargs = 0x6b,
  kNodeMeta = 0x6d,
  // Host objects that are no IR (HostObject, wrap.h): owned by the plugin
  // until their Release* entry, or lent for one pass.
  kSupport = 0x53,     // FxSupport, a support rule
  kPartitions = 0x50,  // FxPartitions, proposed partitions
  kShapeEnv = 0x45,    // FxShapeEnv, a graph's shape environment
  kOptions = 0x4f,     // FxOptions, lent for the pass it configures
  kRegistrar = 0x72,   // FxRegistrar, lent while its plugin registers
  kOpCall = 0x63,      // FxOpCall, lent for one kernel or shape call
  kStatus = 0x73,      // FxStatus, owned until ReleaseStatus
};

// What an object needs to hold a slot when it is not an fx::Graph or
// fx::Node: the number of its slot (0 for none).
class HandleSlot {
 public:
  uint32_t external_slot() const { return slot_; }
  void set_external_slot(uint32_t slot) const { slot_ = slot; }

 private:
  mutable uint32_t slot_ = 0;
};

// A borrowed slot's step from its owner: a field and an index in it.
enum class StepField : uint8_t {
  kArgs = 1,    // a node's args[i]
  kKwargs,      // a node's kwargs[i] (its value)
  kMeta,        // a node's meta[i] (its value)
  kItem,        // an argument's elements[i], or the value of items[i]
  kMatchValue,  // a match's nodes_map[i] (its value)
};
struct Step {
  StepField field;
  uint32_t index;
};

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

  // The handle of the value `step` away from the live object or borrowed
  // value `owner` (a handle this table gave).
  uintptr_t borrowed_of(uintptr_t owner, Step step);
  // The common case without a slot: the value `step` away from the live
  // node `node` (its handle), step.field one of kArgs, kKwargs, kMeta and
  // step.index below kMaxDirectIndex. The handle packs the node's slot,
  // the field's tag, the index and the low 24 bits of the node's
  // generation; node_of_direct() gives the node back while that slot holds
  // the same node. (A stale handle is recognised unless the slot was
  // reused 2**24 times since; even then it names a live node and is read
  // with bounds checks, never through freed memory.)
  static constexpr uint32_t kMaxDirectIndex = 256;
  static uintptr_t direct_of(uintptr_t node, Step step) {
    HandleKind tag = step.field == StepField::kArgs ? HandleKind::kNodeArgs
                     : step.field == StepField::kKwargs
                         ? HandleKind::kNodeKwargs
                         : HandleKind::kNodeMeta;
    return (node & ~uintptr_t{0xFFFFFFFFFF}) |
           uint64_t{static_cast<uint8_t>(tag)} << kKindShift |
           uint64_t{step.index} << kDirectIndexShift |
           (node & kDirectGenerationMask);
  }
  // Of a direct handle: the node and the step, or nullptr with `why` set.
  inline const void* node_of_direct(uintptr_t handle, Step* step,
                                    HandleState* why) const;
  // Of a borrowed handle: its owner's handle and the step, or false with
  // `why` set (kStale, kWrongKind, kUnknown; kNull for NULL).
  inline bool step_of(uintptr_t handle, uintptr_t* owner, Step* step,
                      HandleState* why) const;
  // The tag of a handle made by this table, or 0.
  static uint8_t tag_of(uintptr_t handle) {
    return static_cast<uint8_t>(handle >> kKindShift);
  }

  // Frees `object`'s slot, if it has one (its handles turn stale).
  template <typename Object>
  void forget(const Object* object) noexcept {
    if (object == nullptr) return;
    release(object->external_slot());
    object->set_external_slot(0);  // lent again, it gets a fresh slot
  }

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
  // A direct handle's bits 31..24: the index; 23..0: the generation's low
  // bits.
  static constexpr int kDirectIndexShift = 24;
  static constexpr uintptr_t kDirectGenerationMask = 0xFFFFFF;
  // 16 bytes: a visit of a large graph reads one slot per node.
  struct Slot {
    // The object; for a borrowed slot, the slot itself (never NULL while
    // live).
    std::atomic<const void*> object{nullptr};
    std::atomic<uint32_t> generation{0};
    // Bits 31..24: the kind's tag; 23..0: the first of the borrowed slots
    // taken from this one (a list through Loan::next), 0 for none.
    std::atomic<uint32_t> tag_and_first{0};
  };
  static_assert(sizeof(Slot) == 16, "a slot is 16 bytes");
  static uint8_t tag_in(uint32_t tag_and_first) { return tag_and_first >> 24; }
  static constexpr uint32_t kFirstMask = 0xFFFFFF;
  // What a borrowed slot names, beside the slots (in chunks of their own,
  // made when a chunk's first borrowed slot is).
  struct Loan {
    std::atomic<uintptr_t> owner{0};  // the owner's handle
    std::atomic<uint64_t> step{0};    // field << 32 | index
    std::atomic<uint32_t> next{0};    // the owner's next borrowed slot
  };
  static uint64_t pack_step(Step step) {
    return uint64_t{static_cast<uint8_t>(step.field)} << 32 | step.index;
  }
  static bool known_tag(uint8_t tag) {
    switch (static_cast<HandleKind>(tag)) {
      case HandleKind::kGraph:
      case HandleKind::kNode:
      case HandleKind::kArg:
      case HandleKind::kArgRef:
      case HandleKind::kMatch:
      case HandleKind::kValue:
      case HandleKind::kNodeArgs:
      case HandleKind::kNodeKwargs:
      case HandleKind::kNodeMeta:
      case HandleKind::kSupport:
      case HandleKind::kPartitions:
      case HandleKind::kShapeEnv:
      case HandleKind::kOptions:
      case HandleKind::kRegistrar:
      case HandleKind::kOpCall:
      case HandleKind::kStatus:
        return true;
    }
    return false;
  }
  // The live slot a handle names, or nullptr with `why` set.
  inline const Slot* live_slot(uintptr_t handle, HandleKind kind,
                               HandleState* why) const;
  // A borrowed slot of `owner` (slot `number`) with `step`, or 0.
  uint32_t find_borrowed(uint32_t number, uintptr_t owner, uint64_t step) const;
  // A new borrowed slot of `owner` (slot `number`) with `step`; the caller
  // holds mutex_.
  uint32_t link_borrowed(uint32_t number, uintptr_t owner, uint64_t step);
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
  // The loan of a borrowed slot `number` (its chunk exists).
  Loan* loan(uint32_t number) const {
    Loan* loans = loans_[number >> kChunkBits].load(std::memory_order_acquire);
    return &loans[number & (kChunkSize - 1)];
  }
  uintptr_t pack(uint32_t number) const {
    const Slot& s = *slot(number);
    return uint64_t{number} << kSlotShift |
           uint64_t{tag_in(s.tag_and_first.load(std::memory_order_relaxed))}
               << kKindShift |
           s.generation.load(std::memory_order_relaxed);
  }
  // A free slot holding `object`; the caller holds mutex_.
  uint32_t allocate(const void* object, HandleKind kind);
  void release(uint32_t number) noexcept;

  std::array<std::atomic<Slot*>, kMaxChunks> chunks_{};
  std::array<std::atomic<Loan*>, kMaxChunks> loans_{};
  std::mutex mutex_;            // allocation and the free queue
  uint32_t next_ = 1;           // slot numbers start at 1 (0: no slot)
  std::vector<uint32_t> free_;  // a ring: reused oldest first
  size_t free_head_ = 0;
};

const HandleTable::Slot* HandleTable::live_slot(uintptr_t handle,
                                                HandleKind kind,
                                                HandleState* why) const {
  *why = HandleState::kNull;
  if (handle == 0) return nullptr;
  auto number = static_cast<uint32_t>(handle >> kSlotShift);
  uint8_t tag = tag_of(handle);
  auto generation = static_cast<uint32_t>(handle);
  const Slot* s = known_tag(tag) && number != 0 ? slot(number) : nullptr;
  if (s == nullptr) {
    *why = HandleState::kUnknown;
    return nullptr;
  }
  if (tag != static_cast<uint8_t>(kind)) {
    *why = HandleState::kWrongKind;
    return nullptr;
  }
  if (s->object.load(std::memory_order_acquire) == nullptr ||
      s->generation.load(std::memory_order_acquire) != generation ||
      tag_in(s->tag_and_first.load(std::memory_order_relaxed)) != tag) {
    *why = HandleState::kStale;
    return nullptr;
  }
  *why = HandleState::kLive;
  return s;
}

const void* HandleTable::object_of(uintptr_t handle, HandleKind kind,
                                   HandleState* why) const {
  const Slot* s = live_slot(handle, kind, why);
  return s == nullptr ? nullptr : s->object.load(std::memory_order_acquire);
}

const void* HandleTable::node_of_direct(uintptr_t handle, Step* step,
                                        HandleState* why) const {
  auto number = static_cast<uint32_t>(handle >> kSlotShift);
  const Slot* s = number != 0 ? slot(number) : nullptr;
  if (s == nullptr) {
    *why = HandleState::kUnknown;
    return nullptr;
  }
  const void* object = s->object.load(std::memory_order_acquire);
  if (object == nullptr ||
      (s->generation.load(std::memory_order_acquire) & kDirectGenerationMask) !=
          (handle & kDirectGenerationMask) ||
      tag_in(s->tag_and_first.load(std::memory_order_relaxed)) !=
          static_cast<uint8_t>(HandleKind::kNode)) {
    *why = HandleState::kStale;
    return nullptr;
  }
  switch (static_cast<HandleKind>(tag_of(handle))) {
    case HandleKind::kNodeArgs:
      step->field = StepField::kArgs;
      break;
    case HandleKind::kNodeKwargs:
      step->field = StepField::kKwargs;
      break;
    default:
      step->field = StepField::kMeta;
  }
  step->index = static_cast<uint32_t>(handle >> kDirectIndexShift) & 0xFF;
  *why = HandleState::kLive;
  return object;
}

bool HandleTable::step_of(uintptr_t handle, uintptr_t* owner, Step* step,
                          HandleState* why) const {
  const Slot* s = live_slot(handle, HandleKind::kArgRef, why);
  if (s == nullptr) return false;
  const Loan& l = *loan(static_cast<uint32_t>(handle >> kSlotShift));
  *owner = l.owner.load(std::memory_order_acquire);
  uint64_t packed = l.step.load(std::memory_order_acquire);
  *step =
      Step{static_cast<StepField>(packed >> 32), static_cast<uint32_t>(packed)};
  // Read before the generation changed (a slot freed and reused meanwhile)?
  if (s->generation.load(std::memory_order_acquire) !=
      static_cast<uint32_t>(handle)) {
    *why = HandleState::kStale;
    return false;
  }
  return true;
}

}  // namespace fx::host::internal

#endif  // HOST_HANDLES_HANDLE_TABLE_H_
