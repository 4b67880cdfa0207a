// fx::TreeSpec: the shape of a pytree (torch.utils._pytree.TreeSpec).
//
// A pytree is a value nested in Python's containers; its TreeSpec records
// the containers (their type and what rebuilding them needs, torch's
// "context") with a leaf (`*`) wherever a value that is not a container
// sits. torch.fx keeps two of them for a graph traced with pytree inputs
// (pytree_codegen.h): how the caller's arguments flatten into the
// placeholders, and how the output node's list of values unflattens into
// what forward returns.
//
// The container types are torch 1.13's registered pytree nodes:
//   type            context                        Python
//   tuple, list     none                           tuple, list
//   namedtuple      the class: qualified name      a collections.namedtuple
//                   ("__main__.Point") and fields   (or typing.NamedTuple)
//   dict            the keys, in order             dict
//   OrderedDict     the keys, in order             collections.OrderedDict
//   immutable_list  none                           torch.fx's immutable_list
//   immutable_dict  the keys, in order             torch.fx's immutable_dict
// Keys are constant Arguments (str, int, float, bool, None, ...).
//
// A TreeSpec is a plain value: copyable, comparable (torch's __eq__), and
// printable as torch's repr. The factory functions throw FxError for a
// context that does not fit its children (a key or field count that is not
// the children's count).
#ifndef FX_CORE_IR_TREE_SPEC_H_
#define FX_CORE_IR_TREE_SPEC_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fx_core/ir/argument.h"

namespace fx {

enum class TreeType {
  kLeaf,
  kTuple,
  kList,
  kNamedTuple,
  kDict,
  kOrderedDict,
  kImmutableList,
  kImmutableDict,
};

// The type's name as torch's TreeSpec repr prints it ("tuple",
// "namedtuple", "OrderedDict", "immutable_list"); "*" for a leaf.
std::string_view tree_type_name(TreeType type);
// The inverse of tree_type_name; std::nullopt for any other text.
std::optional<TreeType> parse_tree_type(std::string_view name);
// True for the types whose context is a list of keys.
bool is_dict_tree_type(TreeType type);

class TreeSpec {
 public:
  // A leaf.
  TreeSpec() = default;

  // A tuple, list or immutable_list of `children`.
  static TreeSpec sequence(TreeType type, std::vector<TreeSpec> children);
  // A dict, OrderedDict or immutable_dict: one key per child.
  static TreeSpec dict(TreeType type, ArgumentList keys,
                       std::vector<TreeSpec> children);
  // A namedtuple of the class `class_name` (module and qualified name),
  // one field per child.
  static TreeSpec named_tuple(std::string class_name,
                              std::vector<std::string> fields,
                              std::vector<TreeSpec> children);

  TreeType type() const { return type_; }
  bool is_leaf() const { return type_ == TreeType::kLeaf; }
  const std::vector<TreeSpec>& children() const { return children_; }
  // A dict type's keys (empty for the other types).
  const ArgumentList& keys() const { return keys_; }
  // A namedtuple's class and fields (empty for the other types).
  const std::string& class_name() const { return class_name_; }
  const std::vector<std::string>& fields() const { return fields_; }

  // How many leaves the tree holds (1 for a leaf).
  size_t num_leaves() const { return num_leaves_; }

  // torch's repr: `*`, `TreeSpec(tuple, None, [*, *])`,
  // `TreeSpec(dict, ['a', 'b'], [*, *])`,
  // `TreeSpec(namedtuple, <class '__main__.P'>, [*])`.
  std::string repr() const;

  friend bool operator==(const TreeSpec& a, const TreeSpec& b);
  friend bool operator!=(const TreeSpec& a, const TreeSpec& b) {
    return !(a == b);
  }

 private:
  TreeSpec(TreeType type, std::vector<TreeSpec> children);

  TreeType type_ = TreeType::kLeaf;
  ArgumentList keys_;
  std::string class_name_;
  std::vector<std::string> fields_;
  std::vector<TreeSpec> children_;
  size_t num_leaves_ = 1;
};

}  // namespace fx

#endif  // FX_CORE_IR_TREE_SPEC_H_
