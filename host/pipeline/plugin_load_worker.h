// Opening a plugin in a worker process before this one opens it (fx run
// --isolate, fx plugins --isolate, fx plugin-check).
//
// Loading a plugin runs its code: its static constructors when the library
// is opened, fx_plugin_get_info, its register_extensions. One that crashes,
// aborts, exits or hangs there takes the host with it, and isolating its
// passes (pass_call.h) does not help. So an isolated host first loads each
// plugin in a worker (pass_worker.h): the worker does all of load_plugin
// (plugin_loader.h) and register_extensions (extensions.h), reports the
// result and exits; what ended a worker that did not report (a signal, an
// exit, the timeout, the memory limit) is an error naming the plugin. Only
// a plugin that loaded in the worker is then loaded by the host; one whose
// load failed there has its error returned as is, and the host never opens
// it. (A plugin whose loading crashes only sometimes may still crash the
// host's second load: this guards against plugins that always misbehave.)
#ifndef HOST_PIPELINE_PLUGIN_LOAD_WORKER_H_
#define HOST_PIPELINE_PLUGIN_LOAD_WORKER_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "host/pipeline/pass_worker.h"

namespace fx::host {

// Seconds a plugin may take to load in a worker when no timeout is given.
inline constexpr double kPluginLoadTimeoutSeconds = 60;

// What loading a plugin in a worker found.
struct WorkerLoad {
  // OK when the plugin loaded there; else the error loading it there
  // returned or, when `worker_failed`, what ended the worker: "cannot load
  // plugin 'lib.so': loading it in a worker process failed: the worker
  // process was killed by SIGSEGV; it was not loaded".
  absl::Status status;
  bool worker_failed = false;
};

// Loads the plugin at `path` (pinned to `sha256` when not empty, as in
// load_plugin) in a worker process under `limits`, a timeout of 0 being
// kPluginLoadTimeoutSeconds. Nothing of the plugin is loaded here.
WorkerLoad load_plugin_in_worker(const std::string& path,
                                 std::string_view sha256, WorkerLimits limits);

}  // namespace fx::host

#endif  // HOST_PIPELINE_PLUGIN_LOAD_WORKER_H_
