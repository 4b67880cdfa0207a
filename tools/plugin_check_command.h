// `fx plugin-check LIB.so [--graphs DIR] [--torchvision MODELS] [--rtol X]
// [--atol X] [--pass-timeout SECONDS] [--pass-memory-limit MIB]`: runs
// plugin_api/pipeline/plugin_check.h's checks on every pass of LIB.so and
// prints their table. The graphs are the bundles under DIR
// (find_graph_bundles) and torchvision's models MODELS (comma-separated
// names of torchvision.models, or "default"; exported by Python torch.fx and
// cached: torchvision_graphs.h); with neither, the bundles under
// $FX_REFERENCE_DIR. The plugin is loaded in a worker process first: one
// that crashes, aborts, exits or hangs (past --pass-timeout) while loading
// is the failed check "loads", named with what ended the worker. Exit
// status: 0 when no check failed, 1 when one did or the plugin or a graph
// does not load (or a model does not export), 2 for a usage error.
#ifndef TOOLS_PLUGIN_CHECK_COMMAND_H_
#define TOOLS_PLUGIN_CHECK_COMMAND_H_

#include <ostream>
#include <string>

namespace fx::tools {

struct PluginCheckArgs {
  std::string library;            // LIB.so
  std::string graphs;             // --graphs DIR, or empty
  std::string torchvision;        // --torchvision MODELS, or empty
  std::string rtol;               // --rtol, or empty for the default
  std::string atol;               // --atol, or empty for the default
  std::string pass_timeout;       // --pass-timeout, or empty for the default
  std::string pass_memory_limit;  // --pass-memory-limit, or empty
};

int run_plugin_check_command(const PluginCheckArgs& args, std::ostream& out,
                             std::ostream& err);

}  // namespace fx::tools

#endif  // TOOLS_PLUGIN_CHECK_COMMAND_H_
