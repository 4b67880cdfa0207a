#include "fx_core/ir/tree_spec.h"

#include <utility>

#include "fx_core/ir/python_repr.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

struct TreeTypeName {
  TreeType type;
  std::string_view name;
};

constexpr TreeTypeName kTreeTypeNames[] = {
    {TreeType::kLeaf, "*"},
    {TreeType::kTuple, "tuple"},
    {TreeType::kList, "list"},
    {TreeType::kNamedTuple, "namedtuple"},
    {TreeType::kDict, "dict"},
    {TreeType::kOrderedDict, "OrderedDict"},
    {TreeType::kImmutableList, "immutable_list"},
    {TreeType::kImmutableDict, "immutable_dict"},
};

void check_count(std::string_view what, size_t count, size_t children) {
  if (count != children) {
    throw FxError(
        cat("TreeSpec: ", count, " ", what, " for ", children, " children"));
  }
}

// torch's repr of the context: None, the key list, or the class.
std::string context_repr(const TreeSpec& spec) {
  if (spec.type() == TreeType::kNamedTuple) {
    return cat("<class '", spec.class_name(), "'>");
  }
  if (is_dict_tree_type(spec.type())) {
    return repr(Argument::list(spec.keys()));
  }
  return "None";
}

}  // namespace

std::string_view tree_type_name(TreeType type) {
  for (const auto& [t, name] : kTreeTypeNames) {
    if (t == type) return name;
  }
  return "";
}

std::optional<TreeType> parse_tree_type(std::string_view name) {
  for (const auto& [t, n] : kTreeTypeNames) {
    if (n == name) return t;
  }
  return std::nullopt;
}

bool is_dict_tree_type(TreeType type) {
  return type == TreeType::kDict || type == TreeType::kOrderedDict ||
         type == TreeType::kImmutableDict;
}

TreeSpec::TreeSpec(TreeType type, std::vector<TreeSpec> children)
    : type_(type), children_(std::move(children)), num_leaves_(0) {
  for (const TreeSpec& c : children_) num_leaves_ += c.num_leaves_;
}

TreeSpec TreeSpec::sequence(TreeType type, std::vector<TreeSpec> children) {
  if (type != TreeType::kTuple && type != TreeType::kList &&
      type != TreeType::kImmutableList) {
    throw FxError(cat("TreeSpec::sequence: '", tree_type_name(type),
                      "' is not a tuple, list or immutable_list"));
  }
  return TreeSpec(type, std::move(children));
}

TreeSpec TreeSpec::dict(TreeType type, ArgumentList keys,
                        std::vector<TreeSpec> children) {
  if (!is_dict_tree_type(type)) {
    throw FxError(cat("TreeSpec::dict: '", tree_type_name(type),
                      "' is not a dict, OrderedDict or immutable_dict"));
  }
  check_count("keys", keys.size(), children.size());
  for (const Argument& key : keys) {
    if (key.is_node()) throw FxError("TreeSpec: a key cannot be a Node");
  }
  TreeSpec spec(type, std::move(children));
  spec.keys_ = std::move(keys);
  return spec;
}

TreeSpec TreeSpec::named_tuple(std::string class_name,
                               std::vector<std::string> fields,
                               std::vector<TreeSpec> children) {
  if (class_name.empty()) throw FxError("TreeSpec: a namedtuple needs a class");
  check_count("fields", fields.size(), children.size());
  TreeSpec spec(TreeType::kNamedTuple, std::move(children));
  spec.class_name_ = std::move(class_name);
  spec.fields_ = std::move(fields);
  return spec;
}

std::string TreeSpec::repr() const {
  if (is_leaf()) return "*";
  std::vector<std::string> children;
  children.reserve(children_.size());
  for (const TreeSpec& c : children_) children.push_back(c.repr());
  return cat("TreeSpec(", tree_type_name(type_), ", ", context_repr(*this),
             ", [", join(children, ", "), "])");
}

bool operator==(const TreeSpec& a, const TreeSpec& b) {
  return a.type_ == b.type_ && a.keys_ == b.keys_ &&
         a.class_name_ == b.class_name_ && a.fields_ == b.fields_ &&
         a.children_ == b.children_;
}

}  // namespace fx
