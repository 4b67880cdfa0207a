#include "host/pipeline/pass_registry.h"

#include "absl/strings/ascii.h"
#include "fx_core/support/strings.h"
#include "host/extensions/plugin_extensions.h"
#include "host/pipeline/pipeline.h"
#include "host/pipeline/plugin_load_worker.h"

namespace fx::host {

std::string RegisteredPass::qualified_name() const {
  return cat(plugin->name(), ".", info->name);
}

absl::Status PassRegistry::add(std::shared_ptr<const Plugin> plugin) {
  const FxPluginInfo& info = plugin->info();
  for (size_t i = 0; i < info.num_passes; ++i) {
    RegisteredPass pass{&plugin->pass(i), plugin.get()};
    auto it = by_qualified_name_.find(pass.qualified_name());
    if (it != by_qualified_name_.end()) {
      return absl::AlreadyExistsError(
          cat("pass '", plugin->pass(i).name, "' is provided by both ",
              it->second.plugin->describe(), " and ", plugin->describe(),
              "; load only one of them"));
    }
  }
  absl::Status extended = register_plugin_extensions(plugin);
  if (!extended.ok()) return extended;
  for (size_t i = 0; i < info.num_passes; ++i) {
    RegisteredPass pass{&plugin->pass(i), plugin.get()};
    by_qualified_name_.emplace(pass.qualified_name(), pass);
    by_name_[pass.info->name].push_back(pass);
  }
  plugins_.push_back(std::move(plugin));
  return absl::OkStatus();
}

const RegisteredPass* PassRegistry::find(std::string_view name) const {
  auto q = by_qualified_name_.find(std::string(name));
  if (q != by_qualified_name_.end()) return &q->second;
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end() || it->second.size() != 1) return nullptr;
  return &it->second.front();
}

bool PassRegistry::ambiguous(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it != by_name_.end() && it->second.size() > 1;
}

absl::StatusOr<const RegisteredPass*> PassRegistry::lookup(
    std::string_view name) const {
  if (const RegisteredPass* pass = find(name)) return pass;
  if (!ambiguous(name)) return unknown_pass_error(name);
  std::vector<std::string> plugins, qualified;
  for (const RegisteredPass& p : by_name_.find(std::string(name))->second) {
    plugins.push_back(
        cat("'", p.plugin->name(), "' (",
            p.plugin->path().empty() ? "built in" : p.plugin->path(), ")"));
    qualified.push_back(p.qualified_name());
  }
  return absl::InvalidArgumentError(
      cat("pass '", name, "' is provided by plugins ", join(plugins, " and "),
          "; name one of ", join(qualified, ", ")));
}

absl::Status PassRegistry::unknown_pass_error(std::string_view name) const {
  std::vector<std::string> known;
  for (const RegisteredPass& p : passes()) {
    known.push_back(ambiguous(p.info->name) ? p.qualified_name()
                                            : std::string(p.info->name));
  }
  std::string message =
      cat("unknown pass '", name, "' (",
          known.empty() ? std::string("no plugin is loaded")
                        : cat("known passes: ", join(known, ", ")),
          ")");
  if (!skipped_.empty()) {
    std::vector<std::string> why;
    for (const SkippedPlugin& s : skipped_) {
      why.push_back(cat(s.path, ": ", std::string(s.reason.message())));
    }
    append(&message, "; ", skipped_.size(),
           skipped_.size() == 1 ? " plugin was" : " plugins were",
           " skipped as broken and may provide it: ", join(why, "; "));
  }
  return absl::NotFoundError(message);
}

void PassRegistry::add_skipped(std::string path, absl::Status reason) {
  skipped_.push_back(SkippedPlugin{std::move(path), std::move(reason)});
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

bool trusted_plugin(const PipelineSpec& spec, const Plugin& plugin) {
  if (plugin.path().empty()) return true;
  for (const PluginReference& ref : spec.plugins) {
    if (!ref.sha256.empty() &&
        absl::AsciiStrToLower(ref.sha256) == plugin.sha256()) {
      return true;
    }
  }
  return is_first_party_plugin(plugin.path());
}

bool isolates(const PipelineSpec& spec, const Plugin& plugin) {
  switch (spec.isolation()) {
    case Isolation::kAll:
      return true;
    case Isolation::kAuto:
      return !trusted_plugin(spec, plugin);
    case Isolation::kNone:
      break;
  }
  return false;
}

namespace {

PluginDiscovery discovery_into(PassRegistry& registry,
                               const LoadIsolation& isolation) {
  PluginDiscovery discovery(
      [&registry](std::shared_ptr<const Plugin> plugin) {
        return registry.add(std::move(plugin));
      },
      [&registry](const std::string& path, absl::Status why) {
        registry.add_skipped(path, std::move(why));
      });
  if (isolation.isolated) {
    discovery.set_precheck(
        [limits = isolation.limits, except = isolation.except_trusted](
            const std::string& path, std::string_view sha256) {
          // A pinned file that does not match is refused before it opens.
          if (except && (!sha256.empty() || is_first_party_plugin(path))) {
            return absl::OkStatus();
          }
          return load_plugin_in_worker(path, sha256, limits).status;
        });
  }
  return discovery;
}

}  // namespace

absl::Status load_plugins(const PluginSources& sources, PassRegistry& registry,
                          const LoadIsolation& isolation) {
  return discovery_into(registry, isolation).load(sources);
}

absl::Status load_plugins(const PipelineSpec& spec,
                          const PluginSources& sources,
                          PassRegistry& registry) {
  LoadIsolation isolation{
      spec.isolation() != Isolation::kNone,
      WorkerLimits{spec.pass_timeout_seconds, spec.pass_memory_limit_mib},
      spec.isolation() == Isolation::kAuto};
  PluginDiscovery discovery = discovery_into(registry, isolation);
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
