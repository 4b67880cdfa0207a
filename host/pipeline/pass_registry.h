// The passes a host knows: every pass of every plugin added, by name.
//
// Names. Every pass has a qualified name, `<plugin>.<pass>` ("acme.dce"),
// and its own name ("dce"). Two plugins of different names may both provide
// a pass called "dce": both are added, each is found by its qualified name,
// and the bare name becomes ambiguous (lookup refuses it, naming the
// qualified names to use instead). A qualified name is unique: a plugin
// providing a pass whose qualified name is taken (the same plugin loaded
// twice, say) is refused, naming both plugins. A name is looked up first as
// a qualified name, then as a pass's own name.
//
// Skipped plugins. Libraries found by scanning a directory (--plugin-dir,
// a config's plugin_dirs, $FX_PLUGIN_PATH, the first-party directory) that
// do not load, or that the registry refuses, are skipped: the registry
// records each with its reason (skipped()), hosts report them as warnings,
// and an unknown pass is an error that names them, since one of them may
// have provided it. Files named one by one (--plugin, a config's plugins)
// still stop loading with their error.
//
// The registry keeps the plugins alive, so the pass pointers it hands out
// stay valid as long as the registry does.
//
// load_plugins fills a registry from plugin sources (plugin_discovery.h) and
// from what a pipeline config names; hosts and the fx command share it.
// Isolated (LoadIsolation, or a pipeline that isolates its passes), it loads
// each plugin in a worker process first (plugin_load_worker.h): a plugin
// that crashes, aborts, exits or hangs while loading is then a load error
// naming it (skipped, like any, when it was found in a directory) and the
// host goes on. Under "isolate": "auto" only plugins that are not trusted
// (trusted_plugin) are loaded in a worker first.
#ifndef HOST_PIPELINE_PASS_REGISTRY_H_
#define HOST_PIPELINE_PASS_REGISTRY_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fx/plugin_api.h"
#include "host/loader/plugin_discovery.h"
#include "host/loader/plugin_loader.h"
#include "host/pipeline/pass_worker.h"

namespace fx::host {

struct PipelineSpec;

// A pass and the plugin that provides it.
struct RegisteredPass {
  const FxPassInfo* info;
  const Plugin* plugin;
  // "<plugin>.<pass>".
  std::string qualified_name() const;
};

// A plugin file found in a directory that was not added, and why.
struct SkippedPlugin {
  std::string path;
  absl::Status reason;
};

class PassRegistry {
 public:
  // Adds every pass of `plugin`, after registering its tracer and runtime
  // extensions (extensions.h); refuses the whole plugin if one of its
  // qualified pass names is taken (nothing is added then).
  absl::Status add(std::shared_ptr<const Plugin> plugin);

  // The pass called `name` (qualified, or its own name when one plugin
  // alone provides it), or nullptr (unknown or ambiguous).
  const RegisteredPass* find(std::string_view name) const;
  // The same, or why not: unknown_pass_error, or an ambiguous name's error
  // ("pass 'dce' is provided by plugins 'fx_passes' and 'acme'; name one of
  // fx_passes.dce, acme.dce").
  absl::StatusOr<const RegisteredPass*> lookup(std::string_view name) const;
  // Whether two or more plugins provide a pass of this (own) name.
  bool ambiguous(std::string_view name) const;
  // "unknown pass 'x' (known passes: a, b, c)" style error for `name`; with
  // skipped plugins, names them and their errors too.
  absl::Status unknown_pass_error(std::string_view name) const;

  // Records a plugin that a directory scan skipped (see above).
  void add_skipped(std::string path, absl::Status reason);
  const std::vector<SkippedPlugin>& skipped() const { return skipped_; }

  // Plugins in the order they were added, and all passes in that order.
  const std::vector<std::shared_ptr<const Plugin>>& plugins() const {
    return plugins_;
  }
  std::vector<RegisteredPass> passes() const;

 private:
  std::vector<std::shared_ptr<const Plugin>> plugins_;
  absl::flat_hash_map<std::string, RegisteredPass> by_qualified_name_;
  absl::flat_hash_map<std::string, std::vector<RegisteredPass>> by_name_;
  std::vector<SkippedPlugin> skipped_;
};

// How load_plugins opens plugins: in this process only, or (`isolated`)
// first in a worker process under `limits` (a timeout of 0: the default of
// plugin_load_worker.h).
struct LoadIsolation {
  bool isolated = false;
  WorkerLimits limits;
  // With `isolated`: a plugin pinned by sha256 or first-party
  // (is_first_party_plugin) is loaded here directly ("isolate": "auto").
  bool except_trusted = false;
};

// Whether `plugin` is trusted to run in process under "isolate": "auto":
// compiled into the host (no file), first-party (shipped beside the
// program: is_first_party_plugin), or one whose sha256 `spec` pins (it was
// loaded, so the pin matched; the content is what is trusted).
bool trusted_plugin(const PipelineSpec& spec, const Plugin& plugin);
// Whether `spec` runs the passes of `plugin` in a worker process.
bool isolates(const PipelineSpec& spec, const Plugin& plugin);

// Loads the plugins `sources` names into `registry`, in discovery order
// (plugin_discovery.h). A file named in `sources.plugins` that does not load
// or is refused by the registry stops it, and its error is returned; one
// found in a directory is skipped and recorded (PassRegistry::skipped).
absl::Status load_plugins(const PluginSources& sources, PassRegistry& registry,
                          const LoadIsolation& isolation = {});

// The same for a pipeline: first the plugins its config names ("plugins",
// sha256-pinned where the config says so), then its "plugin_dirs", then
// `sources`; a file named more than once is loaded once. Directory entries
// are skipped as above. When the pipeline isolates its passes
// (PipelineSpec::isolation), plugins are loaded isolated too, under its pass
// timeout and memory limit: every one (true), or those not trusted
// ("auto").
absl::Status load_plugins(const PipelineSpec& spec,
                          const PluginSources& sources, PassRegistry& registry);

}  // namespace fx::host

#endif  // HOST_PIPELINE_PASS_REGISTRY_H_
