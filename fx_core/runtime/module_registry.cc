#include "fx_core/runtime/module_registry.h"

#include <torch/nn/module.h>

#include <algorithm>
#include <utility>

#include "fx_core/runtime/modules/given_config.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {

const ModuleKind& ModuleRegistry::add(ModuleKind kind) {
  if (kind.type.empty() || !kind.forward) {
    throw FxError(cat("ModuleRegistry::add: module kind '", kind.type,
                      "' needs a type name and a forward"));
  }
  auto owned = std::make_unique<ModuleKind>(std::move(kind));
  ModuleKind* raw = owned.get();
  if (raw->describe) {  // values as the module's creator spelled them
    raw->describe =
        [describe = std::move(raw->describe)](const torch::nn::Module& module) {
          return respell_as_given(module, describe(module));
        };
  }
  std::lock_guard<std::mutex> lock(mutex_);
  kinds_.push_back(std::move(owned));
  by_type_[raw->type] = raw;
  if (raw->cpp_type != std::type_index(typeid(void))) {
    by_cpp_type_[raw->cpp_type] = raw;
  }
  return *raw;
}

const ModuleKind* ModuleRegistry::find(const torch::nn::Module& module) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = by_cpp_type_.find(std::type_index(typeid(module)));
  if (it != by_cpp_type_.end()) return it->second;
  auto named = by_type_.find(module.name());
  if (named != by_type_.end() &&
      named->second->cpp_type == std::type_index(typeid(void))) {
    return named->second;
  }
  return nullptr;
}

const ModuleKind* ModuleRegistry::find(std::string_view type) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = by_type_.find(std::string(type));
  return it == by_type_.end() ? nullptr : it->second;
}

const ModuleKind* ModuleRegistry::find(std::string_view type,
                                       const ArgumentDict& config) const {
  const ModuleKind* named = find(type);
  if (named == nullptr || !named->create) return named;
  size_t classes = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& kind : kinds_) classes += kind->type == type;
  }
  if (classes < 2) return named;
  const ModuleKind* built = find(*create(type, config));
  return built != nullptr ? built : named;
}

std::vector<std::string> ModuleRegistry::types() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (const auto& entry : by_type_) out.push_back(entry.first);
  std::sort(out.begin(), out.end());
  return out;
}

const ModuleKind& ModuleRegistry::bind_config(
    std::string_view type, const ArgumentDict& config,
    std::vector<c10::IValue>* values) const {
  const ModuleKind* kind = find(type);
  if (kind == nullptr || !kind->create) {
    throw FxError(cat("unknown module type '", type,
                      "': register it with fx::ModuleRegistry::global().add()"
                      " (a ModuleKind with create and forward)"));
  }
  std::vector<std::pair<std::string, c10::IValue>> kwargs;
  kwargs.reserve(config.size());
  for (const auto& [key, value] : config) {
    try {
      kwargs.emplace_back(key, constant_value(value));
    } catch (const FxError& e) {
      throw FxError(cat(type, " config '", key, "': ", e.what()));
    }
  }
  std::string error;
  if (!bind_values(kind->init_schema, {}, kwargs, values, &error)) {
    throw FxError(cat(type, "() ", error));
  }
  return *kind;
}

std::shared_ptr<torch::nn::Module> ModuleRegistry::create(
    std::string_view type, const ArgumentDict& config,
    const ModuleWeights* weights) const {
  std::vector<c10::IValue> values;
  const ModuleKind& kind = bind_config(type, config, &values);
  OpArgs args(kind.init_schema, values.data());
  try {
    check_module_config(kind, args, weights);
    std::shared_ptr<torch::nn::Module> module = kind.create(args);
    remember_given_config(module, config);
    return module;
  } catch (const std::exception& e) {
    throw FxError(cat(type, ": ", e.what()));
  }
}

bool ModuleRegistry::visit_weights(std::string_view type,
                                   const ArgumentDict& config,
                                   const WeightVisitor& visit) const {
  std::vector<c10::IValue> values;
  const ModuleKind& kind = bind_config(type, config, &values);
  OpArgs args(kind.init_schema, values.data());
  try {
    check_module_config(kind, args);
  } catch (const std::exception& e) {
    throw FxError(cat(type, ": ", e.what()));
  }
  return visit_declared_weights(kind, args, visit);
}

c10::IValue call_module(
    torch::nn::Module& module, std::string_view qualified_name,
    std::vector<c10::IValue> args,
    const std::vector<std::pair<std::string, c10::IValue>>& kwargs) {
  const ModuleKind* kind = ModuleRegistry::global().find(module);
  if (kind == nullptr) {
    throw FxError(cat("module '", qualified_name, "' of C++ type ",
                      module.name(),
                      " cannot be called: register its class with "
                      "fx::ModuleRegistry::global().add()"));
  }
  std::vector<c10::IValue> values;
  std::string error;
  if (!bind_values(kind->forward_schema, std::move(args), kwargs, &values,
                   &error)) {
    throw FxError(cat("module '", qualified_name, "' (", kind->type,
                      ").forward() ", error));
  }
  OpArgs op_args(kind->forward_schema, values.data());
  return kind->forward(module, op_args);
}

}  // namespace fx
