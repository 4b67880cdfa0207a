// `fx reduce FILE --pipeline TEXT [-o OUT] [--isolate] [--plugin PATH]...
// [--plugin-dir DIR]...`: shrinks FILE while the pipeline keeps failing the
// same way (plugin_api/pipeline/graph_reducer.h, pipeline_probe.h) and
// writes the smallest graph found to OUT (default: FILE's name with
// `.reduced.fx.json`), atomically, with the weights it uses beside it.
// Exit status: 0 when reduced and written, 1 when FILE does not fail or
// something does not load or write, 2 for a usage error.
#ifndef TOOLS_REDUCE_COMMAND_H_
#define TOOLS_REDUCE_COMMAND_H_

#include <ostream>
#include <string>

#include "plugin_api/loader/plugin_discovery.h"

namespace fx::tools {

struct ReduceArgs {
  std::string input;              // FILE
  std::string pipeline;           // --pipeline TEXT
  std::string output;             // -o OUT, or empty for the default
  bool isolate = false;           // --isolate: each pass in a worker process
  std::string pass_timeout;       // --pass-timeout SECONDS (implies --isolate)
  std::string pass_memory_limit;  // --pass-memory-limit MIB (implies it too)
  host::PluginSources sources;
};

// OUT when none is given: `dir/name.fx.json` -> `dir/name.reduced.fx.json`.
std::string default_reduce_output(const std::string& input);

int run_reduce_command(const ReduceArgs& args, std::ostream& out,
                       std::ostream& err);

}  // namespace fx::tools

#endif  // TOOLS_REDUCE_COMMAND_H_
