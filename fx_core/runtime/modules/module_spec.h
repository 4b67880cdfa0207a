// fx::FunctionalModuleSpec: one torch.nn class rebuilt from its Python
// definition as an fx::nn::FunctionalModuleImpl kind, and add_module_spec() to
// register it.
//
// A spec is what the Python class is: its constructor signature, the
// parameters and buffers the constructor creates (under Python's names and
// shapes, so a bundle's weights load into them), and its forward. Most
// forwards are one functional call, written as Python writes it
// (nn.ELU: F.elu(input, self.alpha, self.inplace) is target
// "torch.nn.functional.elu" with args {"input", "alpha", "inplace"}). An
// argument token names a forward parameter, a constructor argument
// (`init.NAME` when a forward parameter has the same name),
// `self.NAME` (a parameter or buffer; None when the module has none),
// `training` (the module's mode), or is a Python literal ('reflect', -3,
// None). The call goes through OpRegistry, so the module computes what the
// call_function node of that functional computes. Forwards that are more
// than one call are `custom`.
//
// Internal to fx_core/runtime: the module tables (functional_modules.cc,
// recurrent_modules.cc, ...) use it.
#ifndef FX_CORE_RUNTIME_MODULES_MODULE_SPEC_H_
#define FX_CORE_RUNTIME_MODULES_MODULE_SPEC_H_

#include <ATen/core/ivalue.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/modules/functional_module.h"
#include "fx_core/runtime/op_registry.h"

namespace fx {

// Registers parameters and buffers from the constructor's arguments.
using MakeParameters =
    std::function<void(nn::FunctionalModuleImpl&, OpArgs& init)>;
// A forward that is more than one functional call.
using CustomForward =
    std::function<c10::IValue(nn::FunctionalModuleImpl&, OpArgs& forward)>;

struct FunctionalModuleSpec {
  FunctionalModuleSpec(
      std::string type, std::string init, std::string forward,
      std::string target, std::vector<std::string> args,
      std::vector<std::pair<std::string, std::string>> kwargs = {})
      : type(std::move(type)),
        init(std::move(init)),
        forward(std::move(forward)),
        target(std::move(target)),
        args(std::move(args)),
        kwargs(std::move(kwargs)) {}
  std::string type;     // "ELU": torch.nn.ELU; a dotted name stands as is
  std::string init;     // the constructor's Python signature
  std::string forward;  // the forward's Python signature
  std::string target;   // the functional the forward calls
  std::vector<std::string> args;  // its arguments, as tokens
  std::vector<std::pair<std::string, std::string>> kwargs;
  MakeParameters parameters;
  CustomForward custom;  // set: forward is this, target/args unused
  // > 0: an int `padding` is that many copies (_pair, _quadruple, ...).
  size_t padding_ints = 0;
  // The constructor's contract beyond binding (ModuleKind's), checked
  // before `parameters` allocates anything.
  std::vector<ConfigRule> config_rules;
  std::function<void(OpArgs& init)> check_config;
  std::function<WeightShapes(OpArgs& init)> weight_shapes;
  std::function<void(OpArgs& init, const WeightVisitor&)> visit_weights;
  // The constructor arguments that rebuild a module; unset: describe_config.
  std::function<ArgumentDict(const nn::FunctionalModuleImpl&)> describe;
};

// A FunctionalModuleImpl's constructor arguments from its config (a dtype
// given as a number spelled as a dtype; tensors and unset factory
// arguments left out).
ArgumentDict describe_config(const nn::FunctionalModuleImpl& module);
// A module as a file describes it in a config, a dict {"type", "config",
// "training"}, from its kind's describe. Throws FxError for a module no
// kind describes.
Argument describe_module(const torch::nn::Module& module);

// Registers `spec` as the kind torch.nn.<type>. Throws FxError for a bad
// signature.
void add_module_spec(ModuleRegistry& registry,
                     const FunctionalModuleSpec& spec);

// A call_function target a module's forward calls, looked up in OpRegistry
// on its first call and then kept (OpDefs live as long as the process), so
// neither start-up nor each forward pays for the lookup. Copies share it.
// A target nothing resolves throws FxError at each call, naming it.
class FunctionTarget {
 public:
  explicit FunctionTarget(std::string target);
  c10::IValue operator()(std::vector<c10::IValue> args,
                         const std::vector<std::pair<std::string, c10::IValue>>&
                             kwargs = {}) const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// MultiheadAttention and the Transformer layers (attention_modules.cc).
void add_attention_specs(std::vector<FunctionalModuleSpec>* specs);
// TransformerEncoder, TransformerDecoder and Transformer
// (transformer_modules.cc).
void add_transformer_specs(std::vector<FunctionalModuleSpec>* specs);
// convert_to_reference_fx's reference quantized Linear and Conv1d/2d/3d and
// torch.ao.nn.intrinsic's fused modules (reference_modules.cc).
void add_reference_specs(std::vector<FunctionalModuleSpec>* specs);
// The recurrent layers and cells (recurrent_modules.cc).
void add_recurrent_specs(std::vector<FunctionalModuleSpec>* specs);

// A module a config argument describes as a file describes modules, a dict
// {"type": ..., "config": {...}, "training": ...} (a Transformer stack's
// layer, a fused module's parts), built through the registry (its config
// checked as any other); `what` names the argument in errors.
std::shared_ptr<torch::nn::Module> module_from_description(
    const c10::IValue& v, const std::string& what);
// The declared weights of the module `v` describes, each under `prefix`.
void visit_described_weights(const c10::IValue& v, const std::string& what,
                             const std::string& prefix,
                             const WeightVisitor& visit);

// Python's _ntuple: `n` copies of an int, or the sequence itself.
c10::IValue ntuple(const c10::IValue& v, size_t n);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_MODULES_MODULE_SPEC_H_
