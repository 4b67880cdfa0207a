// fx::ModuleRegistry: what call_module does with a module, and how graph
// files name and rebuild modules.
//
// torch.fx calls a submodule with the node's args; in C++ a torch::nn::Module
// has no virtual forward, so each module class is registered once as a
// ModuleKind:
//  - `type`: the Python class's qualified name ("torch.nn.Conv2d"), as the
//    fx-graph `modules` section and to_folder spell it;
//  - `forward`: the forward signature and a kernel that calls the module;
//  - `create` / `describe`: the module from its constructor arguments (the
//    file's `config`) and back.
// Lookup is by the module's dynamic C++ type, so a GraphModule resolves each
// call_module node once, when it compiles. The registry is open: vendors add
// their own module classes (a leaf module of their tracer) with add().
//
// Built in: the standard torch::nn modules torchvision's classification
// models use and more (Linear, Conv1d/2d/3d, BatchNorm1d/2d/3d, LayerNorm,
// GroupNorm, Dropout, the activations, pooling, Flatten, Identity,
// Embedding), plus Hardswish and Hardsigmoid, which LibTorch's C++ frontend
// lacks (fx::nn::HardswishImpl, HardsigmoidImpl).
#ifndef FX_CORE_RUNTIME_MODULE_REGISTRY_H_
#define FX_CORE_RUNTIME_MODULE_REGISTRY_H_

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <typeindex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "fx_core/ir/argument.h"
#include "fx_core/runtime/op_registry.h"

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace fx {

struct ModuleKind {
  std::string type;                         // "torch.nn.Linear"
  std::type_index cpp_type = typeid(void);  // typeid(torch::nn::LinearImpl)
  OpSchema forward_schema;                  // "input"
  std::function<c10::IValue(torch::nn::Module&, OpArgs&)> forward;
  // `forward` only reads its arguments (see OpDef::keeps_args). True for the
  // built-in kinds.
  bool keeps_args = false;
  // The constructor's Python signature and a factory from bound arguments;
  // empty `create` when the kind cannot be built from a config.
  OpSchema init_schema;
  std::function<std::shared_ptr<torch::nn::Module>(OpArgs&)> create;
  // The constructor keyword arguments that rebuild `module`.
  std::function<ArgumentDict(const torch::nn::Module&)> describe;
  // For the C++ code generator: the class ("torch::nn::LinearImpl") and the
  // header that declares it; empty when generated code cannot name it.
  std::string cpp_class;
  std::string cpp_header;
};

class ModuleRegistry {
 public:
  ModuleRegistry() = default;
  ModuleRegistry(const ModuleRegistry&) = delete;
  ModuleRegistry& operator=(const ModuleRegistry&) = delete;

  // The process-wide registry, holding the built-in kinds.
  static ModuleRegistry& global();

  // Adds or replaces a kind (keyed by both its C++ type and Python name).
  const ModuleKind& add(ModuleKind kind);
  // The kind of `module`'s dynamic type; for a kind registered without a C++
  // type (cpp_type void: one generic class standing for many Python ones,
  // fx::nn::FunctionalModuleImpl), the kind whose `type` is module.name().
  // nullptr when neither exists.
  const ModuleKind* find(const torch::nn::Module& module) const;
  const ModuleKind* find(std::string_view type) const;
  std::vector<std::string> types() const;

  // Builds a module of `type` from constructor keyword arguments. Throws
  // FxError naming the type and the bad or unknown argument, or saying how to
  // register an unknown type.
  std::shared_ptr<torch::nn::Module> create(std::string_view type,
                                            const ArgumentDict& config) const;

 private:
  mutable std::mutex mutex_;
  absl::flat_hash_map<std::type_index, ModuleKind*> by_cpp_type_;
  absl::flat_hash_map<std::string, ModuleKind*> by_type_;
  std::vector<std::unique_ptr<ModuleKind>> kinds_;
};

// Registers the built-in kinds: LibTorch's classes (builtin_modules.cc) and
// the modules rebuilt from their Python definitions (functional_modules.cc).
// global() calls both once.
void register_builtin_modules(ModuleRegistry& registry);
void register_functional_modules(ModuleRegistry& registry);

// Calls `module` with runtime arguments bound to its kind's forward
// signature. Throws FxError naming `qualified_name` when the module's type
// is not registered or the arguments do not bind.
c10::IValue call_module(
    torch::nn::Module& module, std::string_view qualified_name,
    std::vector<c10::IValue> args,
    const std::vector<std::pair<std::string, c10::IValue>>& kwargs);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_MODULE_REGISTRY_H_
