// Loading pass plugins: shared libraries that export `fx_plugin_get_info`
// (plugin_api/include/fx/plugin_api.h), opened with Boost.DLL.
//
// Loading a file, in order, and nothing of the plugin runs before step 3:
//  1. hash the file (SHA-256) and, when a pin is given, refuse a mismatch;
//     then check that it is a complete ELF shared object of this machine
//     (elf_check.h), so a truncated or foreign file is an error, not a
//     SIGBUS or a misleading dlopen message;
//  2. open the library (its static constructors run) and look up the entry
//     point;
//  3. call it and check what it returns (check_plugin_info): the version
//     handshake, then the passes' names, run functions and option schemas.
// A plugin that crashes, exits or hangs in step 2 or 3 takes this process
// with it: hosts that must survive one open it in a worker process first
// (host/pipeline/plugin_load_worker.h).
// Every refusal is a status naming the plugin (its file), what is wrong and
// how to fix it.
//
// The version handshake. A plugin states the API version its headers had
// (`api_version`) and the oldest host API it runs on (`min_api_version`). The
// function table only grows, so a plugin runs on this host when
//   min_api_version <= FX_API_VERSION                (the host is new enough)
//   api_version >= kOldestSupportedPluginApiVersion  (the plugin is not
//                                                     older than we support)
// A plugin built against newer headers still loads when it declares that it
// runs on this host's version; it must then check `FxApi.version` before
// using newer entries. A refused plugin has had none of its passes or
// registrations run (only fx_plugin_get_info, which returns static data).
// Each plugin's passes and extensions are handed the table of version
// min(api_version, FX_API_VERSION) (capi/c_api.h api(version)).
//
// The declaration's sizes (plugin_api.h, "Rules of the structs"): from
// api_version 2 on, FxPluginInfo.struct_size and pass_info_size (0: the
// sizes of that version's header) must cover the fields this host reads; a
// plugin newer than the host must declare pass_info_size when it has more
// than one pass, or its passes cannot be found. The version-6 fields of
// FxPassInfo (a declared tolerance: finite, >= 0; idempotent: 0 or 1) are
// checked and read only where the plugin's FxPassInfo has them.
#ifndef HOST_LOADER_PLUGIN_LOADER_H_
#define HOST_LOADER_PLUGIN_LOADER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fx/plugin_api.h"

namespace fx::host {

// What a pass declares in the FxPassInfo fields appended after version 1
// (plugin_api.h, version 6). A plugin whose FxPassInfo ends before them (an
// api_version below 6, or a pass_info_size that does not cover them) gets
// these defaults: no tolerance declared ({0, 0}), not declared idempotent.
struct PassDeclaration {
  FxTolerance tolerance{0, 0};
  bool idempotent = false;
  bool declares_tolerance() const {
    return tolerance.rtol != 0 || tolerance.atol != 0;
  }
};

// The oldest plugin API version this host still accepts.
inline constexpr uint32_t kOldestSupportedPluginApiVersion = 1;

// A loaded plugin. Its passes' function pointers stay valid as long as the
// Plugin lives: keep the shared_ptr while any of them may run.
class Plugin {
 public:
  ~Plugin();
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  // The FxPluginInfo the plugin returned (static data inside the library).
  const FxPluginInfo& info() const { return *info_; }
  // Its passes (read at the stride it declared; see plugin_pass).
  size_t num_passes() const { return info_->num_passes; }
  const FxPassInfo& pass(size_t index) const;
  // Its version-6 declarations (defaults for older plugins).
  PassDeclaration declaration(size_t index) const;
  std::string_view name() const { return info_->name; }
  std::string_view version() const { return info_->version; }
  // The file it came from (empty for an in-process plugin) and its SHA-256.
  const std::string& path() const { return path_; }
  const std::string& sha256() const { return sha256_; }
  // "plugin 'name' (path)" for messages.
  std::string describe() const;

  // Wraps an FxPluginInfo compiled into the host (tests, built-in passes)
  // after the same checks a loaded plugin gets. `origin` names it.
  static absl::StatusOr<std::shared_ptr<const Plugin>> from_info(
      const FxPluginInfo* info, std::string_view origin);

 private:
  struct Library;  // the Boost.DLL handle, kept out of this header
  Plugin() = default;
  friend absl::StatusOr<std::shared_ptr<const Plugin>> load_plugin(
      const std::string&, std::string_view);

  std::unique_ptr<Library> library_;
  const FxPluginInfo* info_ = nullptr;
  std::string path_;
  std::string sha256_;
};

// Loads the plugin at `path`. With a non-empty `expected_sha256` (64 hex
// digits, any case) the file's digest must match before it is opened. A
// file that is not a complete ELF shared object of this machine (empty,
// foreign, truncated: elf_check.h) is refused naming the path before dlopen
// sees it.
absl::StatusOr<std::shared_ptr<const Plugin>> load_plugin(
    const std::string& path, std::string_view expected_sha256 = {});

// The shared libraries (`*.so`, `*.dylib`, `*.dll`) directly inside
// `directory`, in file-name order; NotFound when it is not a directory.
absl::StatusOr<std::vector<std::string>> plugin_files(
    const std::string& directory);

// Loads every shared library (`*.so`, `*.dylib`, `*.dll`) directly inside
// `directory`, in file-name order. Fails on the first that does not load.
absl::StatusOr<std::vector<std::shared_ptr<const Plugin>>> load_plugin_dir(
    const std::string& directory);

// Pass `index` (< num_passes) of a checked declaration: the element of
// `passes` at the stride the plugin declared, not sizeof(FxPassInfo).
const FxPassInfo& plugin_pass(const FxPluginInfo& info, size_t index);

// The version-6 declarations of `pass`, an element of `info.passes` read
// through plugin_pass: its fields when `info`'s FxPassInfo has them, else
// the defaults. Never reads past the plugin's declared stride.
PassDeclaration pass_declaration(const FxPluginInfo& info,
                                 const FxPassInfo& pass);

// The handshake and structural checks of step 3; `origin` names the plugin
// in messages (its path).
absl::Status check_plugin_info(const FxPluginInfo* info,
                               std::string_view origin);

}  // namespace fx::host

#endif  // HOST_LOADER_PLUGIN_LOADER_H_
