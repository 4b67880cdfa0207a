#include "fx_core/runtime/modules/functional_module.h"

#include <algorithm>

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

c10::optional<at::Tensor> FunctionalModuleImpl::tensor(
    const std::string& name) const {
  // named_parameters() returns its dict by value: keep it while reading.
  auto parameters = named_parameters(true);
  if (const at::Tensor* p = parameters.find(name)) return *p;
  auto buffers = named_buffers(true);
  if (const at::Tensor* b = buffers.find(name)) return *b;
  return c10::nullopt;
}

void FunctionalModuleImpl::declare_optional_buffer(std::string name) {
  optional_buffers_.push_back(std::move(name));
}

bool FunctionalModuleImpl::adopt(const std::string& name,
                                 const at::Tensor& value) {
  bool declared = std::find(optional_buffers_.begin(), optional_buffers_.end(),
                            name) != optional_buffers_.end();
  if (!declared || named_buffers(false).contains(name)) return false;
  register_buffer(name, value.clone());
  return true;
}

}  // namespace fx::nn
