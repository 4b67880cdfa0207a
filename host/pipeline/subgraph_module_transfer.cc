#include "host/pipeline/subgraph_module_transfer.h"

#include <algorithm>
#include <map>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "fx_core/format/graph_json.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/module_path.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx::host {
namespace {

bool under_any(const std::string& name, const std::vector<std::string>& all) {
  for (const std::string& p : all) {
    if (path_is_below(name, p)) return true;
  }
  return false;
}

// Every module of `root` outside `skip` (and its subtree), by address.
std::map<const torch::nn::Module*, std::string> root_modules(
    const torch::nn::Module& root, const std::string& skip) {
  std::map<const torch::nn::Module*, std::string> found;
  for (const auto& m : root.named_modules("", /*include_self=*/false)) {
    if (m.key() == skip || path_is_below(m.key(), skip)) continue;
    found.emplace(m.value().get(), m.key());
  }
  return found;
}

// (name in child, name in root) of each module `child` shares with `root`;
// the tensors of `child`'s own plain containers go with its tensors.
c10::List<std::string> shared_modules(const torch::nn::Module& root,
                                      const std::string& name,
                                      const GraphModule& child,
                                      std::vector<std::string>* shared_names) {
  auto in_root = root_modules(root, name);
  c10::List<std::string> shared;
  for (const auto& m : child.named_modules("", /*include_self=*/false)) {
    if (under_any(m.key(), *shared_names)) continue;
    auto found = in_root.find(m.value().get());
    if (found != in_root.end()) {
      shared.push_back(m.key());
      shared.push_back(found->second);
      shared_names->push_back(m.key());
    } else if (typeid(*m.value()) != typeid(torch::nn::Module) &&
               (!m.value()->named_parameters(false).is_empty() ||
                !m.value()->named_buffers(false).is_empty())) {
      // (A plain container, made on the way to a shared tensor such as
      // `block.0.bias`, is made again when that tensor is set.)
      throw FxError(cat("submodule '", name, ".", m.key(),
                        "' is not one of the root module's and cannot be "
                        "sent back from the worker"));
    }
  }
  return shared;
}

// Every parameter and buffer of `root` outside `skip` (and its subtree), by
// tensor.
std::map<const c10::TensorImpl*, std::string> root_tensors(
    const torch::nn::Module& root, const std::string& skip) {
  std::map<const c10::TensorImpl*, std::string> found;
  auto add = [&](const std::string& key, const at::Tensor& t) {
    if (path_is_below(key, skip) || !t.defined()) return;
    found.emplace(t.unsafeGetTensorImpl(), key);
  };
  for (const auto& p : root.named_parameters(/*recurse=*/true)) {
    add(p.key(), p.value());
  }
  for (const auto& b : root.named_buffers(/*recurse=*/true)) {
    add(b.key(), b.value());
  }
  return found;
}

// `child`'s tensors outside its shared modules: (name in child, name in
// root) in `shared` for those it shares with `root` (GraphShareAttr of a
// parameter or buffer, split_module's get_attr), by value in `owned` for
// the others.
void split_tensors(const torch::OrderedDict<std::string, at::Tensor>& tensors,
                   const std::map<const c10::TensorImpl*, std::string>& in_root,
                   const std::vector<std::string>& shared_names,
                   c10::List<std::string>& shared,
                   c10::Dict<std::string, at::Tensor>& owned) {
  for (const auto& t : tensors) {
    if (under_any(t.key(), shared_names)) continue;
    auto found = t.value().defined()
                     ? in_root.find(t.value().unsafeGetTensorImpl())
                     : in_root.end();
    if (found != in_root.end()) {
      shared.push_back(t.key());
      shared.push_back(found->second);
    } else {
      owned.insert(t.key(), t.value());
    }
  }
}

// The root's tensor of each (name in child, name in root) pair, set on
// `child` as a parameter or a buffer (of the root's kind).
void share_tensors(const GraphModule& root, c10::ArrayRef<c10::IValue> pairs,
                   bool parameter, GraphModule& child) {
  for (size_t i = 0; i + 1 < pairs.size(); i += 2) {
    const std::string& in_root = pairs[i + 1].toStringRef();
    at::Tensor t = root.get_attr(in_root);
    if (!t.defined()) {
      throw FxError(cat("the root module has no parameter or buffer '", in_root,
                        "' to share"));
    }
    child.set_attr(pairs[i].toStringRef(), t, parameter,
                   root.buffer_kind(in_root));
  }
}

// Each module of `m` (by path, `m` itself first) with the names of its own
// parameters, buffers and children in order; `m`'s own modules only, not
// the root's it shares (at `shared` or below).
c10::impl::GenericList registry_orders(const torch::nn::Module& m,
                                       const std::vector<std::string>& shared) {
  c10::impl::GenericList out(c10::AnyType::get());
  auto names = [](const auto& dict) {
    c10::List<std::string> keys;
    for (const auto& item : dict) keys.push_back(item.key());
    return keys;
  };
  for (const auto& sub : m.named_modules("", /*include_self=*/true)) {
    if (std::find(shared.begin(), shared.end(), sub.key()) != shared.end() ||
        under_any(sub.key(), shared)) {
      continue;
    }
    const ModuleMembers members = members_of(*sub.value());
    out.push_back(c10::ivalue::Tuple::create(
        {c10::IValue(sub.key()), c10::IValue(names(members.parameters)),
         c10::IValue(names(members.buffers)),
         c10::IValue(names(members.children))}));
  }
  return out;
}

// `dict` with the keys in `order` first, in that order, then the others.
template <typename Dict>
Dict reordered(const Dict& dict, const c10::IValue& order) {
  Dict out(dict.key_description());
  for (const c10::IValue& key : order.toListRef()) {
    if (const auto* value = dict.find(key.toStringRef())) {
      out.insert(key.toStringRef(), *value);
    }
  }
  for (const auto& item : dict) {
    if (!out.contains(item.key())) out.insert(item.key(), item.value());
  }
  return out;
}

// Puts the registries of the modules of `m` that registry_orders listed
// in the order it gave.
void restore_registry_orders(torch::nn::Module& m, const c10::IValue& orders) {
  for (const c10::IValue& item : orders.toListRef()) {
    const auto& f = item.toTupleRef().elements();
    torch::nn::Module* sub = module_at(m, f.at(0).toStringRef());
    if (sub == nullptr) continue;
    ModuleMembers members = take_members(*sub);
    members.parameters = reordered(members.parameters, f.at(1));
    members.buffers = reordered(members.buffers, f.at(2));
    members.children = reordered(members.children, f.at(3));
    restore_members(*sub, std::move(members));
  }
}

}  // namespace

c10::IValue encode_subgraph_module(const torch::nn::Module& root,
                                   const std::string& name,
                                   const GraphModule& child) {
  std::vector<std::string> shared_names;
  c10::List<std::string> shared =
      shared_modules(root, name, child, &shared_names);
  const auto in_root = root_tensors(root, name);
  c10::Dict<std::string, at::Tensor> parameters, buffers;
  c10::List<std::string> shared_parameters, shared_buffers;
  split_tensors(child.named_parameters(/*recurse=*/true), in_root, shared_names,
                shared_parameters, parameters);
  split_tensors(child.named_buffers(/*recurse=*/true), in_root, shared_names,
                shared_buffers, buffers);
  return c10::ivalue::Tuple::create(
      {c10::IValue(name), c10::IValue(to_graph_json(child.graph())),
       c10::IValue(shared), c10::IValue(parameters), c10::IValue(buffers),
       c10::IValue(shared_parameters), c10::IValue(shared_buffers),
       c10::IValue(registry_orders(child, shared_names))});
}

std::shared_ptr<GraphModule> decode_subgraph_module(const GraphModule& root,
                                                    const c10::IValue& value) {
  const auto& fields = value.toTupleRef().elements();
  auto child = std::make_shared<GraphModule>(GraphModule::AttributeMap{},
                                             std::make_unique<Graph>());
  c10::ArrayRef<c10::IValue> shared = fields[2].toListRef();
  for (size_t i = 0; i + 1 < shared.size(); i += 2) {
    const std::string& in_root = shared[i + 1].toStringRef();
    std::shared_ptr<torch::nn::Module> m = root.get_submodule(in_root);
    if (m == nullptr) {
      throw FxError(
          cat("the root module has no submodule '", in_root, "' to share"));
    }
    child->add_submodule(shared[i].toStringRef(), std::move(m));
  }
  for (const auto& p : fields[3].toGenericDict()) {
    child->set_attr(p.key().toStringRef(), p.value().toTensor(), true);
  }
  for (const auto& b : fields[4].toGenericDict()) {
    child->set_attr(b.key().toStringRef(), b.value().toTensor(), false);
  }
  share_tensors(root, fields[5].toListRef(), /*parameter=*/true, *child);
  share_tensors(root, fields[6].toListRef(), /*parameter=*/false, *child);
  restore_registry_orders(*child, fields[7]);
  absl::StatusOr<GraphFile> file =
      parse_graph_json(fields[1].toStringRef(), "<worker submodule>");
  if (!file.ok()) throw FxError(std::string(file.status().message()));
  child->set_graph(std::move(file->graph));
  return child;
}

}  // namespace fx::host
