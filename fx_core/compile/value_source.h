// Where a value comes from when a compiled plan runs a node: a constant, a
// slot holding an earlier node's value, or a container built from other
// sources (a list argument holding nodes). Built by the step compiler
// (compiled_steps.h) for both plans; resolved once when a plan compiles, so
// running a step does no lookup.
//
// A ValueSource holds its constants as IValues (a tensor constant is shared,
// not copied) and refers to slots by index only; it is immutable once built,
// so any number of threads may call get() at once on their own slots.
// source_of throws FxError on an argument kind a graph cannot hold and
// std::out_of_range when a referenced node has no slot (compile_steps words
// the latter as "cannot compile node ..."); bind_sources reports arguments
// that do not bind through *error.
#ifndef FX_CORE_COMPILE_VALUE_SOURCE_H_
#define FX_CORE_COMPILE_VALUE_SOURCE_H_

#include <ATen/core/ivalue.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "fx_core/ir/argument.h"
#include "fx_core/ir/node.h"
#include "fx_core/runtime/op_registry.h"

namespace fx {

struct ValueSource {
  enum class Kind : uint8_t { kConstant, kSlot, kList, kTuple, kDict, kSlice };
  Kind kind = Kind::kConstant;
  int32_t slot = -1;
  c10::IValue constant;
  std::vector<ValueSource> items;
  std::vector<std::string> keys;  // kDict
  // kTuple: a NamedTuple argument's class, or null; kDict: the keys when
  // they are not all str (argument.h), else empty.
  std::shared_ptr<const NamedTupleType> named_tuple;
  std::vector<c10::IValue> key_values;

  // The value, from the plan's slots.
  c10::IValue get(const std::vector<c10::IValue>& slots) const;

  // Calls fn(slot) for every slot the value reads.
  template <typename Fn>
  void for_each_slot(Fn&& fn) const {
    if (kind == Kind::kSlot) fn(slot);
    for (const ValueSource& s : items) s.for_each_slot(fn);
  }
};

using SlotMap = absl::flat_hash_map<const Node*, int32_t>;

// The source of one argument; every node it references must have a slot.
ValueSource source_of(const Argument& arg, const SlotMap& slot_of);

// A call's args and kwargs bound to `schema` (Python's rules): one source
// per parameter, defaults filled in. False with *error set when they do not
// bind.
bool bind_sources(const OpSchema& schema, const Node::Args& args,
                  const Node::Kwargs& kwargs, const SlotMap& slot_of,
                  std::vector<ValueSource>* params, std::string* error);

}  // namespace fx

#endif  // FX_CORE_COMPILE_VALUE_SOURCE_H_
