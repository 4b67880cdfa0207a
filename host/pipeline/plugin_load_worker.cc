#include "host/pipeline/plugin_load_worker.h"

#include <charconv>
#include <memory>
#include <utility>

#include "fx_core/support/strings.h"
#include "host/capi/extensions.h"
#include "host/loader/plugin_loader.h"

namespace fx::host {
namespace {

// The worker's report: the status code, a newline, the message.
std::string encode(const absl::Status& status) {
  return cat(static_cast<int>(status.code()), "\n",
             std::string(status.message()));
}

absl::Status decode(const std::string& bytes) {
  int code = 0;
  size_t newline = bytes.find('\n');
  if (newline == std::string::npos || newline == 0 ||
      std::from_chars(bytes.data(), bytes.data() + newline, code).ptr !=
          bytes.data() + newline) {
    return absl::InternalError("a plugin-loading worker sent a bad report");
  }
  return absl::Status(static_cast<absl::StatusCode>(code),
                      bytes.substr(newline + 1));
}

// In the worker: everything loading the plugin into a host runs.
absl::Status load_here(const std::string& path, std::string_view sha256) {
  absl::StatusOr<std::shared_ptr<const Plugin>> plugin =
      load_plugin(path, sha256);
  if (!plugin.ok()) return plugin.status();
  return register_extensions((*plugin)->info(), path, (*plugin)->sha256(),
                             *plugin);
}

}  // namespace

WorkerLoad load_plugin_in_worker(const std::string& path,
                                 std::string_view sha256, WorkerLimits limits) {
  if (limits.timeout_seconds <= 0) {
    limits.timeout_seconds = kPluginLoadTimeoutSeconds;
  }
  std::string pin(sha256);
  WorkerOutcome outcome =
      run_in_worker([&] { return encode(load_here(path, pin)); }, limits);
  WorkerLoad load;
  if (outcome.ok) {
    load.status = decode(outcome.result);
    return load;
  }
  load.worker_failed = true;
  load.status = absl::AbortedError(
      cat("cannot load plugin '", path,
          "': loading it in a worker process failed: ", outcome.failure,
          "; it was not loaded"));
  return load;
}

}  // namespace fx::host
