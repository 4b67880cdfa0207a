#include "host/handles/wrap.h"

#include <memory>
#include <type_traits>
#include <vector>

#include "host/handles/guard.h"

namespace fx::host::internal {
namespace {

// How a refusal names a handle's kind, and why such a handle goes stale.
struct KindText {
  const char* name;
  const char* why_gone;
};

KindText text_of(HandleKind kind) {
  switch (kind) {
    case HandleKind::kGraph:
    case HandleKind::kNode: {
      const char* why =
          "its graph was rolled back after a failed pass, replaced, or "
          "released";
      return {kind == HandleKind::kGraph ? "graph" : "node", why};
    }
    case HandleKind::kMatch:
    case HandleKind::kValue:
      return {kind == HandleKind::kMatch ? "match" : "value",
              "it is lent for the duration of its callback"};
    case HandleKind::kSupport:
      return {"support rule", "it was released (ReleaseSupport)"};
    case HandleKind::kPartitions:
      return {"partitions", "they were released (ReleasePartitions)"};
    case HandleKind::kShapeEnv:
      return {"shape environment", "it was released (ReleaseShapeEnv)"};
    case HandleKind::kOptions:
      return {"options", "they are lent for the duration of their pass"};
    case HandleKind::kRegistrar:
      return {"registrar", "it is lent while its plugin registers"};
    case HandleKind::kOpCall:
      return {"custom-op call",
              "it is lent for one call of the kernel or shape function"};
    case HandleKind::kStatus:
      return {"status", "it was released (ReleaseStatus)"};
    case HandleKind::kArg:
    case HandleKind::kArgRef:
    case HandleKind::kNodeArgs:
    case HandleKind::kNodeKwargs:
    case HandleKind::kNodeMeta:
      break;
  }
  return {"argument",
          "it was released, or what it was borrowed from (a node, argument "
          "or match) is gone or no longer holds it"};
}

// items[i] of a list of arguments, or the value of items[i] of a list of
// pairs; nullptr when out of range.
template <typename Items>
const Argument* at(const Items& items, uint32_t i) {
  if (i >= items.size()) return nullptr;
  if constexpr (std::is_same_v<typename Items::value_type, Argument>) {
    return &items[i];
  } else {
    return &items[i].second;
  }
}

// args[i], kwargs[i] (its value) or meta[i] (its value) of `n`.
const Argument* field_of(const Node& n, Step step) {
  switch (step.field) {
    case StepField::kArgs:
      return at(n.args(), step.index);
    case StepField::kKwargs:
      return at(n.kwargs(), step.index);
    case StepField::kMeta:
      return at(n.meta(), step.index);
    default:
      return nullptr;
  }
}

// The argument `step` away from the object or argument `owner` names.
const Argument* follow(uintptr_t owner, Step step, HandleState* why) {
  HandleTable& table = HandleTable::instance();
  if (step.field == StepField::kItem) {
    const Argument* parent =
        resolve_arg(reinterpret_cast<const FxArg*>(owner), why);
    if (parent == nullptr) return nullptr;
    if (parent->is_sequence() || parent->is_slice()) {
      return at(parent->elements(), step.index);
    }
    return parent->is_dict() ? at(parent->items(), step.index) : nullptr;
  }
  if (step.field == StepField::kMatchValue) {
    auto* m = static_cast<const FxMatch*>(
        table.object_of(owner, HandleKind::kMatch, why));
    return m == nullptr ? nullptr : at(*m->nodes_map, step.index);
  }
  auto* n =
      static_cast<const Node*>(table.object_of(owner, HandleKind::kNode, why));
  return n == nullptr ? nullptr : field_of(*n, step);
}

uintptr_t value_of(const void* handle) {
  return reinterpret_cast<uintptr_t>(handle);
}

const FxArg* borrowed(uintptr_t owner, StepField field, size_t index) {
  if (field != StepField::kItem && field != StepField::kMatchValue &&
      index < HandleTable::kMaxDirectIndex) {
    return reinterpret_cast<const FxArg*>(HandleTable::direct_of(
        owner, Step{field, static_cast<uint32_t>(index)}));
  }
  try {
    return reinterpret_cast<const FxArg*>(HandleTable::instance().borrowed_of(
        owner, Step{field, static_cast<uint32_t>(index)}));
  } catch (...) {  // no slot left: handed out as NULL (getters cannot fail)
    return nullptr;
  }
}

}  // namespace

void fail_handle(HandleState state, HandleKind kind, const void* handle) {
  const char* name = text_of(kind).name;
  if (state == HandleState::kStale) {
    fail(
        FX_FAILED_PRECONDITION,
        cat("the ", name, " handle is stale: its ", name, " no longer exists (",
            text_of(kind).why_gone, "); ask the host for a fresh one"));
  }
  if (state == HandleState::kWrongKind) {
    fail(FX_INVALID_ARGUMENT,
         cat("the ", name, " handle is a handle of another kind (a ",
             text_of(
                 static_cast<HandleKind>(HandleTable::tag_of(value_of(handle))))
                 .name,
             ")"));
  }
  fail(FX_INVALID_ARGUMENT,
       cat("the ", name, " handle was not made by this host"));
}

const Argument* resolve_arg(const FxArg* a, HandleState* why) {
  uintptr_t handle = value_of(a);
  HandleTable& table = HandleTable::instance();
  if (HandleTable::tag_of(handle) == static_cast<uint8_t>(HandleKind::kArg)) {
    auto* owned = static_cast<const OwnedArgument*>(
        table.object_of(handle, HandleKind::kArg, why));
    return owned == nullptr ? nullptr : &owned->value;
  }
  uintptr_t owner;
  Step step;
  const Argument* found;
  switch (static_cast<HandleKind>(HandleTable::tag_of(handle))) {
    case HandleKind::kNodeArgs:
    case HandleKind::kNodeKwargs:
    case HandleKind::kNodeMeta: {
      auto* n =
          static_cast<const Node*>(table.node_of_direct(handle, &step, why));
      if (n == nullptr) return nullptr;
      found = field_of(*n, step);
      break;
    }
    default:
      if (!table.step_of(handle, &owner, &step, why)) return nullptr;
      found = follow(owner, step, why);
  }
  // A live owner without that index: the value is gone.
  if (found == nullptr && *why != HandleState::kUnknown &&
      *why != HandleState::kWrongKind) {
    *why = HandleState::kStale;
  }
  return found;
}

FxArg* give(Argument value) {
  auto owned = std::make_unique<OwnedArgument>();
  owned->value = std::move(value);
  uintptr_t handle =
      HandleTable::instance().handle_of(owned.get(), HandleKind::kArg);
  owned.release();
  return reinterpret_cast<FxArg*>(handle);
}

void release_arg(FxArg* a) noexcept {
  HandleState why;
  auto* owned = static_cast<const OwnedArgument*>(
      HandleTable::instance().object_of(value_of(a), HandleKind::kArg, &why));
  if (owned == nullptr) return;
  HandleTable::instance().forget(owned);
  delete owned;
}

const FxArg* borrow(const FxNode* owner, StepField field, size_t index) {
  const Node* n = peek(owner);
  if (n == nullptr) return nullptr;
  size_t size = field == StepField::kArgs     ? n->args().size()
                : field == StepField::kKwargs ? n->kwargs().size()
                                              : n->meta().size();
  if (index >= size) return nullptr;
  return borrowed(value_of(owner), field, index);
}

const FxArg* borrow(const FxArg* owner, size_t index) {
  const Argument* parent = peek(owner);
  if (parent == nullptr) return nullptr;
  size_t size = parent->is_sequence() || parent->is_slice()
                    ? parent->elements().size()
                : parent->is_dict() ? parent->items().size()
                                    : 0;
  if (index >= size) return nullptr;
  return borrowed(value_of(owner), StepField::kItem, index);
}

const FxArg* borrow(const FxMatch* owner, size_t index) {
  const FxMatch* m = peek(owner);
  if (m == nullptr || index >= m->nodes_map->size()) return nullptr;
  return borrowed(value_of(owner), StepField::kMatchValue, index);
}

}  // namespace fx::host::internal
