// Handle conversions of the C ABI: the one place where an opaque C handle and
// the fx_core object behind it are cast into one another (the idea of MLIR's
// mlir/CAPI/Wrap.h). One wrap() / unwrap() pair per handle kind:
//
//   C handle  fx_core object  who owns it
//   FxGraph   fx::Graph       the host (a GraphModule's graph, a pass's
//                             graph), or the plugin (CreateGraph/ReleaseGraph)
//   FxNode    fx::Node        its graph
//   FxArg     fx::Argument    the caller when an entry creates one (Create*,
//                             CloneArg, GraphModuleConfig; ReleaseArg);
//                             otherwise the node, match or argument that
//                             holds it, and borrowed
//
// wrap() gives the handle of an object, unwrap() the object of a handle;
// both keep const-ness and map nullptr to nullptr. Every handle is checked
// (below): a handle outliving its object is refused. Private to the host's
// implementation of the C ABI (host/capi, host/delegate); host code
// elsewhere converts graphs and nodes with fx::host::to_handle() and
// from_handle() (host/capi/c_api.h), which call these.
//
// FxMatch (match.h) and FxValue (host/capi/run_value.h) are checked handles
// too, for the duration of their callback, and so are FxSupport, FxPartitions,
// FxShapeEnv, FxOptions, FxRegistrar, FxOpCall and FxStatus (HostObject, at
// the end).
#ifndef HOST_HANDLES_WRAP_H_
#define HOST_HANDLES_WRAP_H_

#include <memory>
#include <type_traits>

#include "fx/plugin_api.h"
#include "fx_core/ir/argument.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "host/handles/handle_table.h"
#include "host/handles/match.h"

namespace fx::host::internal {

// FxGraph <-> fx::Graph and FxNode <-> fx::Node: handles from the handle
// table (handle_table.h), never addresses. unwrap() maps NULL to nullptr
// and throws ApiError (FX_FAILED_PRECONDITION) for a handle that names no
// live object, saying why (stale: its graph was rolled back, replaced or
// released; a node handle passed as a graph; not a handle); use it inside
// guarded(). peek() gives nullptr for all of those, for the getters that
// cannot fail (they return NULL / 0 as for a NULL handle).
// Throws ApiError saying why `state` (not kNull or kLive) is refused.
// `handle` is the one refused.
[[noreturn]] void fail_handle(HandleState state, HandleKind kind,
                              const void* handle);

template <typename Object>
uintptr_t handle_of(const Object* object, HandleKind kind) noexcept {
  try {
    return HandleTable::instance().handle_of(object, kind);
  } catch (...) {  // no slot left: handed out as NULL (getters cannot fail)
    return 0;
  }
}

inline const void* checked(const void* handle, HandleKind kind) {
  HandleState why;
  const void* object = HandleTable::instance().object_of(
      reinterpret_cast<uintptr_t>(handle), kind, &why);
  if (object == nullptr && why != HandleState::kNull) {
    fail_handle(why, kind, handle);
  }
  return object;
}

inline const void* peeked(const void* handle, HandleKind kind) {
  HandleState why;
  return HandleTable::instance().object_of(reinterpret_cast<uintptr_t>(handle),
                                           kind, &why);
}

inline FxGraph* wrap(Graph* g) {
  return reinterpret_cast<FxGraph*>(handle_of(g, HandleKind::kGraph));
}
inline const FxGraph* wrap(const Graph* g) {
  return reinterpret_cast<const FxGraph*>(handle_of(g, HandleKind::kGraph));
}
inline const Graph* unwrap(const FxGraph* g) {
  return static_cast<const Graph*>(checked(g, HandleKind::kGraph));
}
inline Graph* unwrap(FxGraph* g) {
  return const_cast<Graph*>(unwrap(static_cast<const FxGraph*>(g)));
}
inline const Graph* peek(const FxGraph* g) {
  return static_cast<const Graph*>(peeked(g, HandleKind::kGraph));
}

inline FxNode* wrap(Node* n) {
  return reinterpret_cast<FxNode*>(handle_of(n, HandleKind::kNode));
}
inline const FxNode* wrap(const Node* n) {
  return reinterpret_cast<const FxNode*>(handle_of(n, HandleKind::kNode));
}
inline const Node* unwrap(const FxNode* n) {
  return static_cast<const Node*>(checked(n, HandleKind::kNode));
}
inline Node* unwrap(FxNode* n) {
  return const_cast<Node*>(unwrap(static_cast<const FxNode*>(n)));
}
inline const Node* peek(const FxNode* n) {
  return static_cast<const Node*>(peeked(n, HandleKind::kNode));
}

// FxArg <-> fx::Argument: checked handles too (handle_table.h). An owned
// argument (give(): Create*, CloneArg, GraphModuleConfig, ...) has a slot of
// its own until release_arg() (ReleaseArg). A borrowed one (a node's arg,
// kwarg or meta value, an item of an argument, a match's value) is a
// borrowed slot: its owner and one step, walked again at every unwrap(),
// so it reads what its owner holds now, and is refused once the owner is
// gone or no longer has that field. unwrap() / peek() behave as for graphs
// and nodes.
struct OwnedArgument {
  Argument value;
  uint32_t external_slot() const { return slot; }
  void set_external_slot(uint32_t s) const { slot = s; }
  mutable uint32_t slot = 0;
};

const Argument* resolve_arg(const FxArg* a, HandleState* why);

// A new argument owned by the caller. Throws bad_alloc.
FxArg* give(Argument value);
// Frees an owned argument; a borrowed, stale or unknown handle is ignored.
void release_arg(FxArg* a) noexcept;

inline const Argument* unwrap(const FxArg* a) {
  HandleState why;
  const Argument* arg = resolve_arg(a, &why);
  if (arg == nullptr && why != HandleState::kNull) {
    fail_handle(why, HandleKind::kArg, a);
  }
  return arg;
}
inline const Argument* peek(const FxArg* a) {
  HandleState why;
  return resolve_arg(a, &why);
}

// The handle of what lies `step` away from a live owner (`owner` is its
// handle), or NULL when the owner is not live or the index is out of
// range.
const FxArg* borrow(const FxNode* owner, StepField field, size_t index);
const FxArg* borrow(const FxArg* owner, size_t index);    // an item
const FxArg* borrow(const FxMatch* owner, size_t index);  // a match value

// FxMatch <-> its handle, for the duration of a callback (ScopedMatch).
inline FxMatch* wrap(FxMatch* m) {
  return reinterpret_cast<FxMatch*>(handle_of(m, HandleKind::kMatch));
}
inline const FxMatch* peek(const FxMatch* m) {
  return static_cast<const FxMatch*>(peeked(m, HandleKind::kMatch));
}

// Lends `match` to a callback: handle() is its handle until destruction,
// when the handle and everything borrowed from it turn stale.
class ScopedMatch {
 public:
  explicit ScopedMatch(FxMatch& match) : match_(match) {}
  ~ScopedMatch() { HandleTable::instance().forget(&match_); }
  ScopedMatch(const ScopedMatch&) = delete;
  ScopedMatch& operator=(const ScopedMatch&) = delete;
  FxMatch* handle() { return wrap(&match_); }

 private:
  FxMatch& match_;
};

// Host objects that are no IR behind an opaque handle type: FxSupport,
// FxPartitions and FxShapeEnv (owned by the plugin from the entry that
// makes one until its Release* entry), FxOptions (lent for one pass),
// FxRegistrar (lent while a plugin registers), FxOpCall (lent for one
// call of a custom op's kernel or shape function) and FxStatus (owned by
// whoever holds it until ReleaseStatus).
// The C name stays an incomplete type on the host too, so that no code can
// read a handle as an address; the object is a HostObject<Handle>.
// unwrap_object() and peek_object() behave as unwrap() and peek() above: a
// released, expired or made-up handle is refused by name (or answers as
// NULL), never followed.

// The handle table's kind of each such handle type (none for others: a
// compile error).
template <typename Handle>
struct IsHostObjectHandle : std::false_type {};
template <typename Handle>
constexpr HandleKind kHandleKindOf = [] {
  static_assert(IsHostObjectHandle<Handle>::value,
                "not the handle type of a host object");
  return HandleKind::kGraph;
}();
template <>
constexpr HandleKind kHandleKindOf<FxSupport> = HandleKind::kSupport;
template <>
constexpr HandleKind kHandleKindOf<FxPartitions> = HandleKind::kPartitions;
template <>
constexpr HandleKind kHandleKindOf<FxShapeEnv> = HandleKind::kShapeEnv;
template <>
constexpr HandleKind kHandleKindOf<FxOptions> = HandleKind::kOptions;
template <>
constexpr HandleKind kHandleKindOf<FxRegistrar> = HandleKind::kRegistrar;
template <>
constexpr HandleKind kHandleKindOf<FxOpCall> = HandleKind::kOpCall;
template <>
constexpr HandleKind kHandleKindOf<FxStatus> = HandleKind::kStatus;

// What a Handle stands for: defined where its entries are (partition_api.cc,
// shape_env_api.cc, options_api.cc, extension_api.cc; FxStatus's below).
template <typename Handle>
struct HostObject;

// What an FxStatus names: a code and a message, owned by whoever holds the
// handle until ReleaseStatus (or take_status, status.h).
template <>
struct HostObject<FxStatus> : HandleSlot {
  FxStatusCode code = FX_OK;
  std::string message;
};

// A new object the plugin owns until release_object(). Throws bad_alloc.
template <typename Handle>
Handle* give_object(std::unique_ptr<HostObject<Handle>> object) {
  uintptr_t handle =
      HandleTable::instance().handle_of(object.get(), kHandleKindOf<Handle>);
  object.release();
  return reinterpret_cast<Handle*>(handle);
}

template <typename Handle>
const HostObject<Handle>* unwrap_object(const Handle* h) {
  return static_cast<const HostObject<Handle>*>(
      checked(h, kHandleKindOf<Handle>));
}

template <typename Handle>
const HostObject<Handle>* peek_object(const Handle* h) {
  return static_cast<const HostObject<Handle>*>(
      peeked(h, kHandleKindOf<Handle>));
}

// Frees an owned object; NULL, a second release or a made-up handle does
// nothing.
template <typename Handle>
void release_object(Handle* h) noexcept {
  const HostObject<Handle>* object = peek_object(h);
  if (object == nullptr) return;
  HandleTable::instance().forget(object);
  delete object;
}

// Lends `object` for a scope: handle() is its handle until destruction,
// when it turns stale.
template <typename Handle>
class ScopedObject {
 public:
  explicit ScopedObject(const HostObject<Handle>& object) : object_(object) {}
  ~ScopedObject() { HandleTable::instance().forget(&object_); }
  ScopedObject(const ScopedObject&) = delete;
  ScopedObject& operator=(const ScopedObject&) = delete;
  const Handle* handle() const {
    return reinterpret_cast<const Handle*>(
        handle_of(&object_, kHandleKindOf<Handle>));
  }

 private:
  const HostObject<Handle>& object_;
};

}  // namespace fx::host::internal

#endif  // HOST_HANDLES_WRAP_H_
