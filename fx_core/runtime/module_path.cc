#include "fx_core/runtime/module_path.h"

#include <string>
#include <utility>

namespace fx {
namespace {

// A torch::nn::Module keeps its children, parameters and buffers in
// OrderedDicts, each with a hash index, but shows them only as copies:
// named_children() and named_parameters() copy every entry, which made one
// lookup linear in the module's siblings (or its parameters) and passes over
// big models quadratic. The lookups below read the dictionaries in place.
// The members are not public. An explicit instantiation may name them (the
// standard exempts the names in one from access checking, [temp.spec]), and
// the Member template below takes their addresses that way; a LibTorch that
// renames them fails to compile here.
using ChildDict =
    torch::OrderedDict<std::string, std::shared_ptr<torch::nn::Module>>;
using TensorDict = torch::OrderedDict<std::string, at::Tensor>;

struct ChildrenOf {
  using Type = ChildDict torch::nn::Module::*;
  friend Type member(ChildrenOf);
};
struct ParametersOf {
  using Type = TensorDict torch::nn::Module::*;
  friend Type member(ParametersOf);
};
struct BuffersOf {
  using Type = TensorDict torch::nn::Module::*;
  friend Type member(BuffersOf);
};

template <typename Tag, typename Tag::Type M>
struct Member {
  friend typename Tag::Type member(Tag) { return M; }
};
template struct Member<ChildrenOf, &torch::nn::Module::children_>;
template struct Member<ParametersOf, &torch::nn::Module::parameters_>;
template struct Member<BuffersOf, &torch::nn::Module::buffers_>;

// The defined tensor `name` of `dict` (named_parameters() and
// named_buffers() leave out undefined ones, such as a Conv's absent bias).
const at::Tensor* defined_entry(const TensorDict& dict, std::string_view name) {
  const at::Tensor* t = dict.find(std::string(name));
  return t != nullptr && t->defined() ? t : nullptr;
}

}  // namespace

std::shared_ptr<torch::nn::Module> child_named(const torch::nn::Module& m,
                                               std::string_view name) {
  const std::shared_ptr<torch::nn::Module>* child =
      (m.*member(ChildrenOf{})).find(std::string(name));
  return child != nullptr ? *child : nullptr;
}

const ChildDict& children_of(const torch::nn::Module& m) {
  return m.*member(ChildrenOf{});
}

namespace {
// Moves `from` into `to`, leaving `from` empty with its key description
// (the noun LibTorch's errors use: "Parameter", "Buffer", "Submodule").
template <typename Dict>
void move_out(Dict& from, Dict* to) {
  *to = std::move(from);
  from = Dict(to->key_description());
}
}  // namespace

ModuleMembers members_of(const torch::nn::Module& m) {
  ModuleMembers out;
  out.parameters = m.*member(ParametersOf{});
  out.buffers = m.*member(BuffersOf{});
  out.children = m.*member(ChildrenOf{});
  return out;
}

ModuleMembers take_members(torch::nn::Module& m) {
  ModuleMembers out;
  move_out(m.*member(ParametersOf{}), &out.parameters);
  move_out(m.*member(BuffersOf{}), &out.buffers);
  move_out(m.*member(ChildrenOf{}), &out.children);
  return out;
}

void restore_members(torch::nn::Module& m, ModuleMembers members) {
  m.*member(ParametersOf{}) = std::move(members.parameters);
  m.*member(BuffersOf{}) = std::move(members.buffers);
  m.*member(ChildrenOf{}) = std::move(members.children);
}

const torch::nn::Module* module_at(const torch::nn::Module& root,
                                   std::string_view path) {
  const torch::nn::Module* m = &root;
  if (path.empty()) return m;
  // One key string for every level's lookup, no list of the atoms, no
  // shared_ptr copies: every attribute access of a pass walks here.
  std::string atom;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    atom.assign(path.substr(start, dot == std::string_view::npos
                                       ? std::string_view::npos
                                       : dot - start));
    const std::shared_ptr<torch::nn::Module>* child =
        (m->*member(ChildrenOf{})).find(atom);
    if (child == nullptr || *child == nullptr) return nullptr;
    m = child->get();  // owned by its parent, which outlives this walk
    if (dot == std::string_view::npos) return m;
    start = dot + 1;
  }
}

torch::nn::Module* module_at(torch::nn::Module& root, std::string_view path) {
  return const_cast<torch::nn::Module*>(
      module_at(static_cast<const torch::nn::Module&>(root), path));
}

std::shared_ptr<torch::nn::Module> submodule_at(const torch::nn::Module& root,
                                                std::string_view path) {
  std::string_view owner_path, leaf;
  split_qualified_name(path, &owner_path, &leaf);
  const torch::nn::Module* owner = module_at(root, owner_path);
  return owner == nullptr || leaf.empty() ? nullptr : child_named(*owner, leaf);
}

std::optional<TensorAttr> own_tensor(const torch::nn::Module& m,
                                     std::string_view name) {
  if (const at::Tensor* p = defined_entry(m.*member(ParametersOf{}), name)) {
    return TensorAttr{*p, true};
  }
  if (const at::Tensor* b = defined_entry(m.*member(BuffersOf{}), name)) {
    return TensorAttr{*b, false};
  }
  return std::nullopt;
}

std::optional<TensorAttr> tensor_at(const torch::nn::Module& root,
                                    std::string_view path) {
  std::string_view owner_path, leaf;
  split_qualified_name(path, &owner_path, &leaf);
  const torch::nn::Module* owner = module_at(root, owner_path);
  if (owner == nullptr) return std::nullopt;
  return own_tensor(*owner, leaf);
}

void split_qualified_name(std::string_view path, std::string_view* owner,
                          std::string_view* leaf) {
  size_t dot = path.rfind('.');
  *owner = dot == std::string_view::npos ? "" : path.substr(0, dot);
  *leaf = dot == std::string_view::npos ? path : path.substr(dot + 1);
}

}  // namespace fx
