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
//
// Configs are untrusted (they come from files): create() checks a config
// against the constructor's contract before the constructor runs, so a bad
// one allocates nothing and never reaches a LibTorch kernel:
//  - every int in a config (alone or in a list or tuple) lies within
//    +-kMaxConfigInt, the range LibTorch's kernels (oneDNN's convolutions
//    and pooling among them) compute sizes in without overflow;
//  - the kind's `config_rules`: each named argument's range (channels,
//    kernel sizes, strides, padding, dilation, groups, features ...);
//  - the kind's `check_config`: rules across arguments (a convolution's
//    padded window times its output channels must be a tensor size);
//  - the kind's `weight_shapes` (or, for kinds whose weights repeat, such
//    as a stack of N Transformer layers, `visit_weights`, which names them
//    one at a time so nothing proportional to N is formed): the parameters
//    and buffers the constructor would make; their element counts must not
//    overflow, and with the weights a file holds for the module
//    (ModuleWeights), each must be there with that shape, so a file cannot
//    make the loader allocate more than it holds. A kind declaring neither
//    (a vendor's, registered without them) is built under SkipInitGuard and
//    its weights are checked as they are placed.
// Every refusal is an FxError naming the config field and its value.
#ifndef FX_CORE_RUNTIME_MODULE_REGISTRY_H_
#define FX_CORE_RUNTIME_MODULE_REGISTRY_H_

#include <functional>
#include <limits>
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

// The largest magnitude of an int in a module config (INT32_MAX).
constexpr int64_t kMaxConfigInt = (int64_t{1} << 31) - 1;

// A range one constructor argument must lie in: an int, or every int of a
// list or tuple; a float (a bool passes). None and strings are left to the
// constructor ('same' padding, an optional argument).
struct ConfigRule {
  std::string param;  // the constructor's parameter name
  int64_t min = 0;
  int64_t max = kMaxConfigInt;
  double min_float = -std::numeric_limits<double>::infinity();
  double max_float = std::numeric_limits<double>::infinity();
};

// A count of repeated parts (layers, each two or more modules or
// parameters): at most this many, so a config cannot make the constructor
// loop 2^31 times.
constexpr int64_t kMaxRepeatCount = int64_t{1} << 16;

// Rule helpers: an int (or ints) in [min, max]; a finite float in [min, max].
ConfigRule ints_at_least(std::string param, int64_t min);
ConfigRule ints_in(std::string param, int64_t min, int64_t max);
ConfigRule float_in(std::string param, double min, double max);

// The parameters and buffers a constructor makes: key inside the module and
// shape.
using WeightShapes = std::vector<std::pair<std::string, std::vector<int64_t>>>;
// Receives one parameter or buffer (key inside the module, shape); it may
// throw to stop the walk.
using WeightVisitor = std::function<void(const std::string& key,
                                         const std::vector<int64_t>& shape)>;

// The weights a file holds for one module: `find(key)` is the tensor at that
// key inside the module, or nullptr; `path` (the module's path) names them.
struct ModuleWeights {
  std::string path;
  std::function<const at::Tensor*(const std::string& key)> find;
};

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
  // The constructor's contract, checked before `create` runs (see the top
  // of this file); each is optional. `check_config` throws FxError naming
  // the field and value; `weight_shapes` must not allocate.
  std::vector<ConfigRule> config_rules;
  std::function<void(OpArgs&)> check_config;
  std::function<WeightShapes(OpArgs&)> weight_shapes;
  std::function<void(OpArgs&, const WeightVisitor&)> visit_weights;
  // The constructor keyword arguments that rebuild `module`. add() wraps it
  // so that a module create() built says them as its config spelled them
  // (kernel_size=3, not (3, 3): modules/given_config.h).
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
  // The kind of the module create(type, config) builds. It differs from
  // find(type) only for a type whose config chooses among several classes
  // (MaxPool2d with return_indices=True is not LibTorch's MaxPool2dImpl);
  // only then is the module built. nullptr for an unknown type; throws
  // FxError as create() for a config it refuses.
  const ModuleKind* find(std::string_view type,
                         const ArgumentDict& config) const;
  std::vector<std::string> types() const;

  // Builds a module of `type` from constructor keyword arguments, checked
  // first against the kind's contract (see the top of this file) and, given
  // `weights`, against the weights that will replace the module's. Throws
  // FxError naming the type and the bad or unknown argument and its value,
  // or saying how to register an unknown type.
  std::shared_ptr<torch::nn::Module> create(
      std::string_view type, const ArgumentDict& config,
      const ModuleWeights* weights = nullptr) const;

  // Checks `config` as create() does (without weights), then calls `visit`
  // for each parameter and buffer its kind declares a module of `type`
  // built from `config` would hold. False when the kind declares none
  // (neither weight_shapes nor visit_weights). Throws FxError as create().
  bool visit_weights(std::string_view type, const ArgumentDict& config,
                     const WeightVisitor& visit) const;

 private:
  // `type`'s kind with `config` bound to its constructor's signature.
  const ModuleKind& bind_config(std::string_view type,
                                const ArgumentDict& config,
                                std::vector<c10::IValue>* values) const;

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
// PyTorch's lowered quantized modules on LibTorch's int8 kernels
// (modules/quantized_modules.cc).
void register_quantized_modules(ModuleRegistry& registry);

// Checks bound constructor arguments `args` of `kind` against its contract
// (the generic int bound, config_rules, check_config, weight_shapes) and,
// given, `weights`. Throws FxError naming the field and value. create()
// calls it; exposed for tests and fuzzing.
void check_module_config(const ModuleKind& kind, OpArgs& args,
                         const ModuleWeights* weights = nullptr);
// The declared parameters and buffers of `kind` for bound `args`, one at a
// time (weight_shapes or visit_weights); false when it declares none.
bool visit_declared_weights(const ModuleKind& kind, OpArgs& args,
                            const WeightVisitor& visit);

// Calls `module` with runtime arguments bound to its kind's forward
// signature. Throws FxError naming `qualified_name` when the module's type
// is not registered or the arguments do not bind.
c10::IValue call_module(
    torch::nn::Module& module, std::string_view qualified_name,
    std::vector<c10::IValue> args,
    const std::vector<std::pair<std::string, c10::IValue>>& kwargs);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_MODULE_REGISTRY_H_
