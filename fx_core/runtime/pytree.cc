#include "fx_core/runtime/pytree.h"

#include <string>
#include <utility>

#include "fx_core/io/python_tuples.h"
#include "fx_core/ir/python_repr.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

// fx_pytree's _dict_flatten_spec: d[k] for each key of the spec.
std::vector<c10::IValue> dict_children(const c10::IValue& tree,
                                       const TreeSpec& spec) {
  if (!tree.isGenericDict()) {
    throw FxError(cat("tree_flatten_spec: a '", value_type_name(tree),
                      "' where the spec has a dict (", spec.repr(), ")"));
  }
  c10::impl::GenericDict dict = tree.toGenericDict();
  std::vector<c10::IValue> children;
  children.reserve(spec.keys().size());
  for (const Argument& key : spec.keys()) {
    auto it = dict.find(constant_value(key));
    if (it == dict.end()) throw FxError(cat("KeyError: ", repr(key)));
    children.push_back(it->value());
  }
  return children;
}

// fx_pytree's _list_flatten_spec / _tuple_flatten_spec: d[i] for each child
// of the spec.
std::vector<c10::IValue> sequence_children(const c10::IValue& tree,
                                           const TreeSpec& spec) {
  if (!is_sequence(tree)) {
    throw FxError(cat("tree_flatten_spec: a '", value_type_name(tree),
                      "' where the spec has a ", tree_type_name(spec.type()),
                      " (", spec.repr(), ")"));
  }
  std::vector<c10::IValue> items = sequence_elements(tree);
  if (items.size() < spec.children().size()) {
    throw FxError(cat("IndexError: ", tree.isList() ? "list" : "tuple",
                      " index out of range"));
  }
  items.resize(spec.children().size());
  return items;
}

// The values a spec's children are read from.
std::vector<c10::IValue> spec_children(const c10::IValue& tree,
                                       const TreeSpec& spec) {
  switch (spec.type()) {
    case TreeType::kDict:
      return dict_children(tree, spec);
    case TreeType::kTuple:
    case TreeType::kList:
    case TreeType::kNamedTuple:
      return sequence_children(tree, spec);
    default:
      throw FxError(cat(
          tree_type_name(spec.type()),
          " does not have a flatten_fn_spec associated with it. Please "
          "register one with torch.fx._pytree.register_pytree_flatten_spec."));
  }
}

void flatten_into(const c10::IValue& tree, const TreeSpec& spec,
                  std::vector<c10::IValue>& leaves) {
  if (spec.is_leaf()) {
    leaves.push_back(tree);
    return;
  }
  std::vector<c10::IValue> children = spec_children(tree, spec);
  for (size_t i = 0; i < children.size(); ++i) {
    flatten_into(children[i], spec.children()[i], leaves);
  }
}

// Keys typed as the dict's: str or int when all are, else Any.
c10::TypePtr key_type(const ArgumentList& keys) {
  bool all_int = !keys.empty();
  bool all_string = true;
  for (const Argument& k : keys) {
    all_int &= k.is_int();
    all_string &= k.is_string();
  }
  if (all_string) return c10::StringType::get();
  if (all_int) return c10::IntType::get();
  return c10::AnyType::get();
}

c10::IValue make_dict(const ArgumentList& keys,
                      std::vector<c10::IValue> values) {
  c10::impl::GenericDict dict(key_type(keys), c10::AnyType::get());
  for (size_t i = 0; i < keys.size(); ++i) {
    dict.insert_or_assign(constant_value(keys[i]), std::move(values[i]));
  }
  return dict;
}

// The container of `spec`'s type holding `children`.
c10::IValue rebuild(const TreeSpec& spec, std::vector<c10::IValue> children) {
  switch (spec.type()) {
    case TreeType::kList:
    case TreeType::kImmutableList:
      return make_list(std::move(children));
    case TreeType::kNamedTuple:
      return make_named_tuple(spec.class_name(), spec.fields(),
                              std::move(children));
    case TreeType::kDict:
    case TreeType::kOrderedDict:
    case TreeType::kImmutableDict:
      return make_dict(spec.keys(), std::move(children));
    default:
      return make_tuple(std::move(children));
  }
}

c10::IValue unflatten_from(std::vector<c10::IValue>::iterator& next,
                           const TreeSpec& spec) {
  if (spec.is_leaf()) return std::move(*next++);
  std::vector<c10::IValue> children;
  children.reserve(spec.children().size());
  for (const TreeSpec& child : spec.children()) {
    children.push_back(unflatten_from(next, child));
  }
  return rebuild(spec, std::move(children));
}

// Python's TypeError for a call of forward(self, ARGS) with `given`
// positional arguments (self not counted).
void check_argument_count(const PyTreeInfo& info, size_t given) {
  size_t first = info.has_self() ? 1 : 0;
  size_t expected = info.orig_args.size() - first;
  if (given > expected) {
    throw FxError(cat("forward() takes ", expected + 1,
                      " positional arguments but ", given + 1, " were given"));
  }
  if (given < expected) {
    std::vector<std::string> missing;
    for (size_t i = first + given; i < info.orig_args.size(); ++i) {
      missing.push_back(cat("'", info.orig_args[i], "'"));
    }
    throw FxError(cat(
        "forward() missing ", missing.size(), " required positional argument",
        missing.size() == 1 ? "" : "s", ": ", join(missing, ", ")));
  }
}

}  // namespace

std::vector<c10::IValue> tree_flatten_spec(const c10::IValue& tree,
                                           const TreeSpec& spec) {
  std::vector<c10::IValue> leaves;
  leaves.reserve(spec.num_leaves());
  flatten_into(tree, spec, leaves);
  return leaves;
}

c10::IValue tree_unflatten(std::vector<c10::IValue> leaves,
                           const TreeSpec& spec) {
  if (leaves.size() != spec.num_leaves()) {
    throw FxError(cat("tree_unflatten(values, spec): `values` has length ",
                      leaves.size(),
                      " but the spec refers to a pytree that holds ",
                      spec.num_leaves(), " items (", spec.repr(), ")."));
  }
  auto next = leaves.begin();
  return unflatten_from(next, spec);
}

std::vector<c10::IValue> flatten_pytree_inputs(
    const PyTreeInfo& info, std::vector<c10::IValue> inputs) {
  check_argument_count(info, inputs.size());
  // The code flattens [self, x, ...] (self when orig_args has it) and binds
  // self again to the first leaf: self's leaves are dropped here.
  if (info.has_self()) inputs.insert(inputs.begin(), c10::IValue());
  std::vector<c10::IValue> leaves =
      tree_flatten_spec(make_tuple(std::move(inputs)), info.in_spec);
  if (info.has_self() && !info.in_spec.children().empty()) {
    size_t self_leaves = info.in_spec.children()[0].num_leaves();
    leaves.erase(leaves.begin(), leaves.begin() + self_leaves);
  }
  return leaves;
}

c10::IValue unflatten_pytree_output(const PyTreeInfo& info,
                                    const c10::IValue& output) {
  if (!info.out_spec) {
    throw FxError(
        "tree_unflatten(values, spec): Expected `spec` to be instance of "
        "TreeSpec but got item of type NoneType.");
  }
  std::vector<c10::IValue> leaves = is_sequence(output)
                                        ? sequence_elements(output)
                                        : std::vector<c10::IValue>{output};
  return tree_unflatten(std::move(leaves), *info.out_spec);
}

}  // namespace fx
