// Qualified paths inside a torch::nn::Module tree ("layer1.0.conv1",
// "linear.weight"), as torch.fx's get_submodule / get_parameter walk them.
//
// LibTorch's named_parameters() and named_buffers() return dicts by value,
// so a pointer from their find() dangles once the statement ends; these
// helpers return tensors and modules by (shared) value instead.
#ifndef FX_CORE_RUNTIME_MODULE_PATH_H_
#define FX_CORE_RUNTIME_MODULE_PATH_H_

#include <torch/nn/module.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace fx {

// The direct child `name` of `m`, or nullptr.
std::shared_ptr<torch::nn::Module> child_named(const torch::nn::Module& m,
                                               std::string_view name);

// The direct children of `m` by name, in order, read in place (children()
// and named_children() copy them); valid while `m`'s children do not change.
const torch::OrderedDict<std::string, std::shared_ptr<torch::nn::Module>>&
children_of(const torch::nn::Module& m);

// The module at `path` below `root` (`root` itself for an empty path), or
// nullptr when a level is missing.
torch::nn::Module* module_at(torch::nn::Module& root, std::string_view path);
const torch::nn::Module* module_at(const torch::nn::Module& root,
                                   std::string_view path);

// The submodule at a non-empty `path` below `root`, shared, or nullptr.
std::shared_ptr<torch::nn::Module> submodule_at(const torch::nn::Module& root,
                                                std::string_view path);

// A parameter or buffer found at a path.
struct TensorAttr {
  at::Tensor tensor;
  bool is_parameter = false;
};

// The parameter or buffer `name` of `m` itself (not of its children).
std::optional<TensorAttr> own_tensor(const torch::nn::Module& m,
                                     std::string_view name);
// The parameter or buffer at `path` below `root` ("layer1.0.bn1.weight").
std::optional<TensorAttr> tensor_at(const torch::nn::Module& root,
                                    std::string_view path);

// A module's own registries: its parameters, buffers and children, in
// order (LibTorch has no way to take one out again but unregister_module).
struct ModuleMembers {
  torch::OrderedDict<std::string, at::Tensor> parameters;
  torch::OrderedDict<std::string, at::Tensor> buffers;
  torch::OrderedDict<std::string, std::shared_ptr<torch::nn::Module>> children;
};
// A copy of `m`'s registries (the same tensors and children).
ModuleMembers members_of(const torch::nn::Module& m);
// Takes every parameter, buffer and child out of `m`, which keeps none.
ModuleMembers take_members(torch::nn::Module& m);
// Makes `members` what `m` holds, replacing whatever it held.
void restore_members(torch::nn::Module& m, ModuleMembers members);

// Whether `path` names something strictly below `ancestor` ("a.b.c" and
// "a.b" below "a"; not "ab", not "a" itself).
inline bool path_is_below(std::string_view path, std::string_view ancestor) {
  return path.size() > ancestor.size() &&
         path.substr(0, ancestor.size()) == ancestor &&
         path[ancestor.size()] == '.';
}

// Splits "a.b.c" into owner "a.b" and leaf "c" (owner empty for "c").
void split_qualified_name(std::string_view path, std::string_view* owner,
                          std::string_view* leaf);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_MODULE_PATH_H_
