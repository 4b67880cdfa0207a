// `fx plugin-check LIB.so [--graphs DIR] [--torchvision MODELS] [--pass
// NAME]... [--before PIPELINE] [--plugin PATH]... [--plugin-dir DIR]...
// [--no-default-plugins] [--rtol X] [--atol X] [--pass-timeout SECONDS]
// [--pass-memory-limit MIB]`: runs host/plugin_check/plugin_check.h's
// checks on the passes of LIB.so (every one, or each --pass NAME) and
// prints their table, always whole: every check that runs the plugin's code
// runs it in a worker process, so a crash, an exit or a hang past
// --pass-timeout in any check is that check's FAIL naming what ended the
// worker ("the worker process was killed by SIGSEGV"). The graphs are the
// bundles under DIR (find_graph_bundles) and torchvision's models MODELS
// (comma-separated names of torchvision.models, or "default"; exported by
// Python torch.fx and cached: torchvision_graphs.h); with neither, the
// bundles under $FX_REFERENCE_DIR. --before PIPELINE (text form, e.g.
// "shape_prop") runs on each graph, with its example inputs, before the
// checked pass; without it, a pass requiring tensor_meta gets shape_prop
// first where the bundle has input.pt. Its passes come from LIB.so,
// --plugin, --plugin-dir and the default plugin directories (not with
// --no-default-plugins). The plugin is loaded in a worker process first:
// one that crashes, aborts, exits or hangs (past --pass-timeout) while
// loading is the failed check "loads", named with what ended the worker.
// Exit status: 0 when no check failed, 1 when one did, the plugin or a graph
// does not load (or a model does not export), a --pass names no pass of
// LIB.so or --before a pass no plugin provides (the message names those
// there are), 2 for a usage error (a flag's value, --before's syntax).
#ifndef TOOLS_PLUGIN_CHECK_COMMAND_H_
#define TOOLS_PLUGIN_CHECK_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "host/loader/plugin_discovery.h"

namespace fx::tools {

struct PluginCheckArgs {
  std::string library;              // LIB.so
  std::string graphs;               // --graphs DIR, or empty
  std::string torchvision;          // --torchvision MODELS, or empty
  std::string rtol;                 // --rtol, or empty for the default
  std::string atol;                 // --atol, or empty for the default
  std::string pass_timeout;         // --pass-timeout, or empty for the default
  std::string pass_memory_limit;    // --pass-memory-limit, or empty
  std::vector<std::string> passes;  // each --pass NAME; empty: every pass
  std::string before;               // --before PIPELINE, or empty
  host::PluginSources sources;      // where --before's passes come from
};

int run_plugin_check_command(const PluginCheckArgs& args, std::ostream& out,
                             std::ostream& err);

}  // namespace fx::tools

#endif  // TOOLS_PLUGIN_CHECK_COMMAND_H_
