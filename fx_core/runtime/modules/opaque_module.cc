#include "fx_core/runtime/modules/opaque_module.h"

#include <utility>

#include "fx_core/runtime/module_registry.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

// forward(*args, **kwargs): the bound tuple and dict handed to the object.
c10::IValue call_opaque(torch::nn::Module& m, OpArgs& a) {
  auto* opaque = dynamic_cast<OpaqueModuleImpl*>(&m);
  if (opaque == nullptr) {
    throw FxError(cat("module class ", m.name(),
                      " is registered as an opaque module but is not one"));
  }
  const auto& elements = a[0].toTupleRef().elements();
  OpaqueModuleImpl::Kwargs kwargs;
  for (const auto& e : a[1].toGenericDict()) {
    kwargs.emplace_back(e.key().toStringRef(), e.value());
  }
  return opaque->forward(
      std::vector<c10::IValue>(elements.begin(), elements.end()), kwargs);
}

}  // namespace

bool is_opaque_module_kind(const ModuleKind& kind) {
  // Opaque kinds are the ones whose forward is call_opaque.
  using Forward = c10::IValue (*)(torch::nn::Module&, OpArgs&);
  const Forward* forward = kind.forward.target<Forward>();
  return forward != nullptr && *forward == &call_opaque;
}

void register_opaque_module_kind(const std::string& type) {
  ModuleRegistry& registry = ModuleRegistry::global();
  if (const ModuleKind* known = registry.find(type)) {
    if (is_opaque_module_kind(*known)) return;
    throw FxError(cat("module class ", type,
                      " is a kind the SDK knows: it cannot be held as an "
                      "opaque module"));
  }
  ModuleKind kind;
  kind.type = type;
  kind.forward_schema = OpSchema::parse("*args, **kwargs");
  kind.forward = call_opaque;
  registry.add(std::move(kind));
}

OpaqueModuleImpl::OpaqueModuleImpl(std::string type,
                                   std::shared_ptr<void> handle,
                                   std::shared_ptr<const Behaviour> behaviour,
                                   bool training)
    : torch::nn::Module(type),
      handle_(std::move(handle)),
      behaviour_(std::move(behaviour)) {
  if (!behaviour_ || !behaviour_->call) {
    throw FxError(cat("opaque module ", type, ": no call behaviour"));
  }
  register_opaque_module_kind(type);
  torch::nn::Module::train(training);
}

c10::IValue OpaqueModuleImpl::forward(std::vector<c10::IValue> args,
                                      const Kwargs& kwargs) {
  return behaviour_->call(handle_.get(), std::move(args), kwargs);
}

std::shared_ptr<torch::nn::Module> OpaqueModuleImpl::clone(
    const c10::optional<c10::Device>& device) const {
  if (device.has_value()) {
    throw FxError(
        cat("opaque module ", name(), " cannot be moved to a device"));
  }
  if (!behaviour_->copy) {
    throw FxError(
        cat("opaque module ", name(), " (", origin(), ") cannot be copied"));
  }
  return std::make_shared<OpaqueModuleImpl>(
      name(), behaviour_->copy(handle_.get()), behaviour_, is_training());
}

void OpaqueModuleImpl::train(bool on) {
  if (behaviour_->train) behaviour_->train(handle_.get(), on);
  torch::nn::Module::train(on);
}

}  // namespace fx
