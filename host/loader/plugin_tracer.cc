#include "host/loader/plugin_tracer.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/tracer/extensions.h"
#include "host/capi/extensions.h"

namespace fx::host {

bool PluginTracer::is_leaf_module(
    const torch::nn::Module& m, std::string_view module_qualified_name) const {
  std::string type = module_type_name(m);
  std::optional<bool> verdict = leaf_module_rule(type, module_qualified_name);
  if (verdict.has_value()) return *verdict;
  return Tracer::is_leaf_module(m, module_qualified_name);
}

void register_plugin_tracer_policy() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_tracer_policy("plugins",
                           [] { return std::make_unique<PluginTracer>(); });
  });
}

}  // namespace fx::host
