#include "fx_core/runtime/module_path.h"

#include "fx_core/support/strings.h"

namespace fx {

std::shared_ptr<torch::nn::Module> child_named(const torch::nn::Module& m,
                                               std::string_view name) {
  for (const auto& item : m.named_children()) {
    if (item.key() == name) return item.value();
  }
  return nullptr;
}

const torch::nn::Module* module_at(const torch::nn::Module& root,
                                   std::string_view path) {
  const torch::nn::Module* m = &root;
  if (path.empty()) return m;
  for (std::string_view atom : split(path, '.')) {
    std::shared_ptr<torch::nn::Module> child = child_named(*m, atom);
    if (!child) return nullptr;
    m = child.get();  // owned by its parent, which outlives this walk
  }
  return m;
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
  for (const auto& p : m.named_parameters(/*recurse=*/false)) {
    if (p.key() == name) return TensorAttr{p.value(), true};
  }
  for (const auto& b : m.named_buffers(/*recurse=*/false)) {
    if (b.key() == name) return TensorAttr{b.value(), false};
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
