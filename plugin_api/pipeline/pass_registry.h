// The passes a host knows: every pass of every plugin added, by name.
//
// Pass names are global: two plugins may not both provide a pass of the same
// name (the second add is refused, naming both plugins). The registry keeps
// the plugins alive, so the pass pointers it hands out stay valid as long as
// the registry does.
//
// load_plugins fills a registry from plugin sources (plugin_discovery.h) and
// from what a pipeline config names; hosts and the fx command share it.
#ifndef PLUGIN_API_PIPELINE_PASS_REGISTRY_H_
#define PLUGIN_API_PIPELINE_PASS_REGISTRY_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "fx/plugin_api.h"
#include "plugin_api/loader/plugin_discovery.h"
#include "plugin_api/loader/plugin_loader.h"

namespace fx::host {

struct PipelineSpec;

// A pass and the plugin that provides it.
struct RegisteredPass {
  const FxPassInfo* info;
  const Plugin* plugin;
};

class PassRegistry {
 public:
  // Adds every pass of `plugin`, after registering its tracer and runtime
  // extensions (extensions.h); refuses the whole plugin if one of its pass
  // names is taken (nothing is added then).
  absl::Status add(std::shared_ptr<const Plugin> plugin);

  // The pass called `name`, or nullptr.
  const RegisteredPass* find(std::string_view name) const;
  // "unknown pass 'x' (known passes: a, b, c)" style error for `name`.
  absl::Status unknown_pass_error(std::string_view name) const;

  // Plugins in the order they were added, and all passes in that order.
  const std::vector<std::shared_ptr<const Plugin>>& plugins() const {
    return plugins_;
  }
  std::vector<RegisteredPass> passes() const;

 private:
  std::vector<std::shared_ptr<const Plugin>> plugins_;
  absl::flat_hash_map<std::string, RegisteredPass> by_name_;
};

// Loads the plugins `sources` names into `registry`, in discovery order
// (plugin_discovery.h); the first plugin that does not load or is refused by
// the registry stops it, and its error is returned.
absl::Status load_plugins(const PluginSources& sources, PassRegistry& registry);

// The same for a pipeline: first the plugins its config names ("plugins",
// sha256-pinned where the config says so), then its "plugin_dirs", then
// `sources`; a file named more than once is loaded once.
absl::Status load_plugins(const PipelineSpec& spec,
                          const PluginSources& sources, PassRegistry& registry);

}  // namespace fx::host

#endif  // PLUGIN_API_PIPELINE_PASS_REGISTRY_H_
