#include "fx_core/compile/module_config.h"

namespace fx {

std::optional<std::vector<int64_t>> int_pair(const ArgumentDict& config,
                                             std::string_view key,
                                             int64_t fallback) {
  const Argument* a = find_item(config, key);
  if (a == nullptr) return std::vector<int64_t>{fallback, fallback};
  if (a->is_int()) return std::vector<int64_t>{a->as_int(), a->as_int()};
  if (!a->is_sequence() || a->elements().size() != 2) return std::nullopt;
  std::vector<int64_t> out;
  for (const Argument& e : a->elements()) {
    if (!e.is_int()) return std::nullopt;
    out.push_back(e.as_int());
  }
  return out;
}

std::optional<int64_t> int_item(const ArgumentDict& config,
                                std::string_view key, int64_t fallback) {
  const Argument* a = find_item(config, key);
  if (a == nullptr) return fallback;
  if (!a->is_int()) return std::nullopt;
  return a->as_int();
}

}  // namespace fx
