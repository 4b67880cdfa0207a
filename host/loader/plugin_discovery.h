// Where plugins come from: files, directories and the default search path,
// each plugin file loaded once. Shared by library hosts and the fx command.
//
// The default directories (default_plugin_dirs), in order:
//  1. every non-empty entry of $FX_PLUGIN_PATH (colon-separated);
//  2. the first-party plugins shipped with the running program: the first
//     of `<executable>.runfiles/fx_sdk/plugins`,
//     `<executable's directory>/../lib/fx-sdk/plugins` (kInstalledPluginDir),
//     `$RUNFILES_DIR/fx_sdk/plugins` and `$TEST_SRCDIR/fx_sdk/plugins` that
//     is a directory (bazel-bin/tools/fx, an installed PREFIX/bin/fx,
//     `bazel run`, a test's runfiles). The executable is /proc/self/exe, so
//     symbolic links to it do not change what is found.
// A directory contributes its shared libraries in file-name order
// (plugin_files in plugin_loader.h).
//
// PluginDiscovery hands each plugin to a sink as soon as it is loaded (a
// PassRegistry's add, say), so plugins arrive in discovery order and the
// first error, from loading or from the sink, stops discovery and is
// returned unchanged; with a skip handler, an error about a file found by
// scanning a directory is handed to it instead and discovery goes on (one
// broken library in a plugin directory does not take the others down). A file
// seen before (by canonical path) is skipped, whichever way it was named, and
// is not hashed or opened again.
//
// With a precheck (set_precheck), each file is handed to it before it is
// loaded here, and its error is the file's error: hosts that must survive a
// plugin crashing while it loads open it in a worker process first
// (host/pipeline/plugin_load_worker.h).
#ifndef HOST_LOADER_PLUGIN_DISCOVERY_H_
#define HOST_LOADER_PLUGIN_DISCOVERY_H_

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "host/loader/plugin_loader.h"

namespace fx::host {

// Where an installed SDK keeps the first-party plugins, relative to its
// prefix (tools/install/install.sh lays it out).
inline constexpr std::string_view kInstalledPluginDir = "lib/fx-sdk/plugins";

// The default directories above, those that exist (FX_PLUGIN_PATH entries
// are listed whether or not they exist; loading a missing one is an error).
std::vector<std::string> default_plugin_dirs();

// The first-party plugin directory (item 2 above), or empty; and whether
// the file at `path` lies directly inside it (compared as canonical
// directories, so a symbolic link to a plugin elsewhere is not inside).
// Under "isolate": "auto" its plugins are trusted to run in process.
std::string first_party_plugin_dir();
bool is_first_party_plugin(const std::string& path);

// What a host asks for, loaded in this order: the files, the directories,
// then (unless turned off) the default directories.
struct PluginSources {
  std::vector<std::string> plugins;      // plugin files (fx: --plugin)
  std::vector<std::string> plugin_dirs;  // directories (fx: --plugin-dir)
  bool default_dirs = true;              // fx: off with --no-default-plugins
};

class PluginDiscovery {
 public:
  // Receives each plugin loaded; an error stops discovery.
  using Sink = std::function<absl::Status(std::shared_ptr<const Plugin>)>;
  // Receives a file of a directory that did not load or that the sink
  // refused, with the error.
  using Skip = std::function<void(const std::string& path, absl::Status)>;
  explicit PluginDiscovery(Sink sink, Skip skip = nullptr);

  // Receives each new file (and its pin) before it is loaded; an error
  // stands for the file's load error.
  using Precheck =
      std::function<absl::Status(const std::string& path, std::string_view)>;
  void set_precheck(Precheck precheck) { precheck_ = std::move(precheck); }

  // Loads the plugin at `path` (pinned when `sha256` is given, see
  // load_plugin) unless that file was loaded already.
  absl::Status load_file(const std::string& path, std::string_view sha256 = {});
  // Loads every plugin file directly inside `directory`; NotFound when it is
  // not a directory. A file that fails goes to the skip handler, if any.
  absl::Status load_directory(const std::string& directory);
  // Loads what `sources` names, in its order.
  absl::Status load(const PluginSources& sources);

 private:
  Sink sink_;
  Skip skip_;
  Precheck precheck_;
  std::set<std::string> seen_;  // canonical paths
};

}  // namespace fx::host

#endif  // HOST_LOADER_PLUGIN_DISCOVERY_H_
