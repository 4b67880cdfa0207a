#include "plugin_api/pipeline/pass_registry.h"

#include "fx_core/support/strings.h"
#include "plugin_api/capi/extensions.h"

namespace fx::host {

absl::Status PassRegistry::add(std::shared_ptr<const Plugin> plugin) {
  const FxPluginInfo& info = plugin->info();
  for (size_t i = 0; i < info.num_passes; ++i) {
    auto it = by_name_.find(info.passes[i].name);
    if (it != by_name_.end()) {
      return absl::AlreadyExistsError(
          cat("pass '", info.passes[i].name, "' is provided by both ",
              it->second.plugin->describe(), " and ", plugin->describe(),
              "; load only one of them"));
    }
  }
  absl::Status extended = register_extensions(
      info, plugin->path().empty() ? "built in" : plugin->path(), plugin);
  if (!extended.ok()) return extended;
  for (size_t i = 0; i < info.num_passes; ++i) {
    by_name_.emplace(info.passes[i].name,
                     RegisteredPass{&info.passes[i], plugin.get()});
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
      out.push_back(RegisteredPass{&info.passes[i], plugin.get()});
    }
  }
  return out;
}

}  // namespace fx::host
