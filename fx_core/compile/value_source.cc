#include "fx_core/compile/value_source.h"

#include <optional>
#include <utility>

#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"

namespace fx {
namespace {

bool references_nodes(const Argument& arg) {
  bool found = false;
  for_each_node(arg, [&](Node*) { found = true; });
  return found;
}

}  // namespace

c10::IValue ValueSource::get(const std::vector<c10::IValue>& slots) const {
  switch (kind) {
    case Kind::kConstant:
      return constant;
    case Kind::kSlot:
      return slots[slot];
    case Kind::kList:
    case Kind::kTuple: {
      std::vector<c10::IValue> values;
      values.reserve(items.size());
      for (const ValueSource& s : items) values.push_back(s.get(slots));
      c10::IValue list = kind == Kind::kList ? make_list(std::move(values))
                                             : make_tuple_of(named_tuple.get(),
                                                             std::move(values));
      check_value_depth(list);
      return list;
    }
    case Kind::kDict: {
      std::vector<c10::IValue> values;
      values.reserve(items.size());
      for (const ValueSource& s : items) values.push_back(s.get(slots));
      std::vector<c10::IValue> dict_keys = key_values;
      if (dict_keys.empty()) dict_keys.assign(keys.begin(), keys.end());
      c10::IValue value = make_dict_of(std::move(dict_keys), std::move(values));
      check_value_depth(value);
      return value;
    }
    case Kind::kSlice:
      return make_slice(items[0].get(slots), items[1].get(slots),
                        items[2].get(slots));
  }
  return c10::IValue();
}

ValueSource source_of(const Argument& arg, const SlotMap& slot_of) {
  ValueSource s;
  if (!references_nodes(arg)) {
    s.constant = constant_value(arg);
    return s;
  }
  switch (arg.kind()) {
    case Argument::Kind::kNode:
      s.kind = ValueSource::Kind::kSlot;
      s.slot = slot_of.at(arg.as_node());
      return s;
    case Argument::Kind::kList:
    case Argument::Kind::kTuple:
    case Argument::Kind::kSlice:
      s.kind = arg.is_list()    ? ValueSource::Kind::kList
               : arg.is_tuple() ? ValueSource::Kind::kTuple
                                : ValueSource::Kind::kSlice;
      s.named_tuple = arg.shared_named_tuple_type();
      for (const Argument& a : arg.elements()) {
        s.items.push_back(source_of(a, slot_of));
      }
      return s;
    case Argument::Kind::kDict:
      s.kind = ValueSource::Kind::kDict;
      if (arg.dict_keys() != nullptr) s.key_values = dict_key_values(arg);
      for (const auto& [key, value] : arg.items()) {
        s.keys.push_back(key);
        s.items.push_back(source_of(value, slot_of));
      }
      return s;
    default:
      throw FxError("unexpected argument kind");
  }
}

bool bind_sources(const OpSchema& schema, const Node::Args& args,
                  const Node::Kwargs& kwargs, const SlotMap& slot_of,
                  std::vector<ValueSource>* params, std::string* error) {
  std::vector<std::optional<Argument>> bound;
  if (!bind_node_arguments(schema, args, kwargs, &bound, error)) return false;
  params->clear();
  params->reserve(bound.size());
  for (size_t p = 0; p < bound.size(); ++p) {
    if (bound[p]) {
      params->push_back(source_of(*bound[p], slot_of));
    } else {
      ValueSource s;
      s.constant = schema.params()[p].default_value;
      params->push_back(std::move(s));
    }
  }
  return true;
}

}  // namespace fx
