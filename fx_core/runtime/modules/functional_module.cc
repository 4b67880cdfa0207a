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
  // Forwards call this for every parameter they read: direct parameters are
  // found in place; only buffers and children's tensors go through the
  // copying named_*() accessors.
  size_t dot = name.find('.');
  if (dot != std::string::npos) {
    auto children = named_children();
    const std::shared_ptr<torch::nn::Module>* child =
        children.find(name.substr(0, dot));
    if (child == nullptr) return c10::nullopt;
    std::string rest = name.substr(dot + 1);
    auto parameters = (*child)->named_parameters(true);
    if (const at::Tensor* p = parameters.find(rest)) return *p;
    auto buffers = (*child)->named_buffers(true);
    if (const at::Tensor* b = buffers.find(rest)) return *b;
    return c10::nullopt;
  }
  if (const at::Tensor* p = parameters_.find(name)) {
    return p->defined() ? c10::optional<at::Tensor>(*p) : c10::nullopt;
  }
  auto buffers = named_buffers(false);
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

c10::IValue FunctionalModuleImpl::derived(
    const std::vector<at::Tensor>& from,
    const std::function<c10::IValue()>& make) const {
  std::vector<std::pair<const void*, uint32_t>> key;
  for (const at::Tensor& t : from) {
    key.emplace_back(t.unsafeGetTensorImpl(), t.defined() ? t._version() : 0);
  }
  std::lock_guard<std::mutex> lock(derived_.mutex);
  if (derived_.key != key || derived_.value.isNone()) {
    derived_.value = make();
    derived_.key = std::move(key);
    derived_.held = from;
  }
  return derived_.value;
}

}  // namespace fx::nn
