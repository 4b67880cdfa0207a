#include "fx_core/runtime/modules/given_config.h"

#include <torch/nn/module.h>

#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

namespace fx {
namespace {

struct Given {
  std::weak_ptr<torch::nn::Module> module;  // the address's current owner
  ArgumentDict config;
};

// Entries by module address; an entry whose module is gone is stale (the
// address may be reused) and is pruned as the table grows.
class GivenConfigs {
 public:
  void remember(const std::shared_ptr<torch::nn::Module>& module,
                const ArgumentDict& config) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (by_module_.size() >= prune_at_) {
      for (auto it = by_module_.begin(); it != by_module_.end();) {
        it = it->second.module.expired() ? by_module_.erase(it) : std::next(it);
      }
      prune_at_ = std::max<size_t>(1024, 2 * by_module_.size());
    }
    by_module_[module.get()] = Given{module, config};
  }

  std::optional<ArgumentDict> lookup(const torch::nn::Module& module) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = by_module_.find(&module);
    if (it == by_module_.end()) return std::nullopt;
    std::shared_ptr<torch::nn::Module> owner = it->second.module.lock();
    if (owner.get() != &module) return std::nullopt;
    return it->second.config;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<const torch::nn::Module*, Given> by_module_;
  size_t prune_at_ = 1024;
};

GivenConfigs& given_configs() {
  static GivenConfigs* table = new GivenConfigs();
  return *table;
}

// Whether `given` is `described` spelled otherwise (see the header).
bool same_value(const Argument& given, const Argument& described) {
  if (given == described) return true;
  if (given.is_int() && described.is_float()) {
    return static_cast<double>(given.as_int()) == described.as_float();
  }
  if (given.is_float() && described.is_int()) {
    return given.as_float() == static_cast<double>(described.as_int());
  }
  if (!described.is_sequence()) return false;
  const ArgumentList& items = described.elements();
  if (given.is_int()) {
    for (const Argument& item : items) {
      if (!item.is_int() || item.as_int() != given.as_int()) return false;
    }
    return !items.empty();
  }
  if (!given.is_sequence() || given.elements().size() != items.size()) {
    return false;
  }
  for (size_t i = 0; i < items.size(); ++i) {
    if (!same_value(given.elements()[i], items[i])) return false;
  }
  return true;
}

}  // namespace

void remember_given_config(const std::shared_ptr<torch::nn::Module>& module,
                           const ArgumentDict& config) {
  if (module != nullptr) given_configs().remember(module, config);
}

ArgumentDict respell_as_given(const torch::nn::Module& module,
                              ArgumentDict described) {
  std::optional<ArgumentDict> given = given_configs().lookup(module);
  if (!given) return described;
  for (auto& [key, value] : described) {
    for (const auto& [given_key, given_value] : *given) {
      if (given_key == key && same_value(given_value, value)) {
        value = given_value;
        break;
      }
    }
  }
  return described;
}

}  // namespace fx
