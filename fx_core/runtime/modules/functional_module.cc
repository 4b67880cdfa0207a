#include "fx_core/runtime/modules/functional_module.h"

#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx::nn {

FunctionalModuleImpl::FunctionalModuleImpl(std::string type, Config config)
    // torch::nn::Module is a virtual base: the most derived class names it.
    : torch::nn::Module(std::move(type)), config_(std::move(config)) {}

const c10::IValue& FunctionalModuleImpl::config(std::string_view name) const {
  for (const auto& [key, value] : config_) {
    if (key == name) return value;
  }
  throw FxError(cat(this->name(), " has no constructor argument '", name, "'"));
}

}  // namespace fx::nn
