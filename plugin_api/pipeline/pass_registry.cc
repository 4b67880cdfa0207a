#include "plugin_api/pipeline/pass_registry.h"

#include "fx_core/support/strings.h"
#include "plugin_api/capi/extensions.h"
#include "plugin_api/pipeline/pipeline.h"

namespace fx::host {

absl::Status PassRegistry::add(std::shared_ptr<const Plugin> plugin) {
  const FxPluginInfo& info = plugin->info();
  for (size_t i = 0; i < info.num_passes; ++i) {
    auto it = by_name_.find(plugin->pass(i).name);
    if (it != by_name_.end()) {
      return absl::AlreadyExistsError(
          cat("pass '", plugin->pass(i).name, "' is provided by both ",
              it->second.plugin->describe(), " and ", plugin->describe(),
              "; load only one of them"));
    }
  }
  absl::Status extended = register_extensions(
      info, plugin->path().empty() ? "built in" : plugin->path(),
      plugin->sha256(), plugin);
  if (!extended.ok()) return extended;
  for (size_t i = 0; i < info.num_passes; ++i) {
    by_name_.emplace(plugin->pass(i).name,
                     RegisteredPass{&plugin->pass(i), plugin.get()});
  }
  plugins_.push_back(std::move(plugin));
  return absl::OkStatus();
}

const RegisteredPass* PassRegistry::find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : &it->second;
}

absl::Status PassRegistry::unknown_pass_error(std::string_view name) const {
  std::vector<std::string> known;
  for (const RegisteredPass& p : passes()) known.emplace_back(p.info->name);
  return absl::NotFoundError(cat("unknown pass '", name, "' (",
                                 known.empty()
                                     ? std::string("no plugin is loaded")
                                     : cat("known passes: ", join(known, ", ")),
                                 ")"));
}

std::vector<RegisteredPass> PassRegistry::passes() const {
  std::vector<RegisteredPass> out;
  for (const auto& plugin : plugins_) {
    const FxPluginInfo& info = plugin->info();
    for (size_t i = 0; i < info.num_passes; ++i) {
      out.push_back(RegisteredPass{&plugin->pass(i), plugin.get()});
    }
  }
  return out;
}

namespace {

PluginDiscovery::Sink add_to(PassRegistry& registry) {
  return [&registry](std::shared_ptr<const Plugin> plugin) {
    return registry.add(std::move(plugin));
  };
}

}  // namespace

absl::Status load_plugins(const PluginSources& sources,
                          PassRegistry& registry) {
  return PluginDiscovery(add_to(registry)).load(sources);
}

absl::Status load_plugins(const PipelineSpec& spec,
                          const PluginSources& sources,
                          PassRegistry& registry) {
  PluginDiscovery discovery(add_to(registry));
  for (const PluginReference& ref : spec.plugins) {
    absl::Status s = discovery.load_file(ref.path, ref.sha256);
    if (!s.ok()) return s;
  }
  for (const std::string& dir : spec.plugin_dirs) {
    absl::Status s = discovery.load_directory(dir);
    if (!s.ok()) return s;
  }
  return discovery.load(sources);
}

}  // namespace fx::host
