// fx::OpaqueModuleImpl: a call_module target that is an object of a host
// language, run by calling back into it.
//
// A graph that comes from Python may call a module whose class the SDK has
// no kind for (a user's nn.Module kept as a leaf by its tracer,
// torchvision's Conv2dNormActivation under create_feature_extractor). The
// Python binding wraps the object in an OpaqueModuleImpl: the Python class's
// qualified name (module.name(), "torchvision.ops.misc.Conv2dNormActivation"),
// an opaque handle on the object with an origin tag ("python"), and the
// origin's behaviour (how to call the object, optionally how to deep-copy
// it and set its training mode). fx_core never looks inside a handle.
//
// Each such class is a ModuleKind of its own, registered on first use
// under the class's name with no C++ type (ModuleRegistry finds it by
// module.name()): its forward(*args, **kwargs) calls the object, so passes
// see an ordinary opaque call_module node and GraphModuleType answers the
// Python class; it has no `create` and no `describe`, so a graph file can
// neither hold nor rebuild it (writing one fails naming the module,
// graph_module_file.h). The module registers no parameters or buffers of
// its own: the object holds them.
//
// Threads: forward() may run on any thread; the behaviour's call is
// responsible for its language's locking (the Python binding takes the GIL).
#ifndef FX_CORE_RUNTIME_MODULES_OPAQUE_MODULE_H_
#define FX_CORE_RUNTIME_MODULES_OPAQUE_MODULE_H_

#include <ATen/core/ivalue.h>
#include <torch/nn/module.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fx {

struct ModuleKind;

class OpaqueModuleImpl : public torch::nn::Module {
 public:
  using Kwargs = std::vector<std::pair<std::string, c10::IValue>>;
  // What an origin does with its objects; shared by all its modules.
  struct Behaviour {
    std::string origin;  // "python"
    // Calls the object. Errors propagate (FxError preferred).
    std::function<c10::IValue(void* handle, std::vector<c10::IValue> args,
                              const Kwargs& kwargs)>
        call;
    // A deep copy of the object, for deepcopy(); empty: it cannot be copied.
    std::function<std::shared_ptr<void>(void* handle)> copy;
    // Sets the object's training mode (train()); empty: nothing to set.
    std::function<void(void* handle, bool on)> train;
  };

  // `type` is the host class's qualified name. Registers the module kind
  // for `type` when it is not registered yet; throws FxError when `type`
  // names a kind that is not an opaque one (a class the SDK knows).
  OpaqueModuleImpl(std::string type, std::shared_ptr<void> handle,
                   std::shared_ptr<const Behaviour> behaviour, bool training);

  const std::string& type() const { return name(); }
  const std::shared_ptr<void>& handle() const { return handle_; }
  const std::string& origin() const { return behaviour_->origin; }

  c10::IValue forward(std::vector<c10::IValue> args, const Kwargs& kwargs);
  // A module holding the behaviour's copy of the object; throws FxError
  // naming the class when the behaviour cannot copy. `device` must be unset.
  std::shared_ptr<torch::nn::Module> clone(
      const c10::optional<c10::Device>& device = c10::nullopt) const override;
  // Sets this module's mode and the object's.
  void train(bool on = true) override;

 private:
  std::shared_ptr<void> handle_;
  std::shared_ptr<const Behaviour> behaviour_;
};

// Registers the opaque kind for `type` (forward `*args, **kwargs`) unless
// it is registered. Throws FxError when `type` is a kind that is not opaque.
void register_opaque_module_kind(const std::string& type);
// Whether `kind` is one register_opaque_module_kind made.
bool is_opaque_module_kind(const ModuleKind& kind);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_MODULES_OPAQUE_MODULE_H_
