// The isolation flags fx run, fx reduce and fx minimize share: where each
// pass of their pipeline runs (apply_isolation_flags in
// pipeline_commands.h reads them over the pipeline's own settings).
#ifndef TOOLS_PASS_ISOLATION_ARGS_H_
#define TOOLS_PASS_ISOLATION_ARGS_H_

#include <string>

namespace fx::tools {

struct PassIsolationArgs {
  bool isolate = false;           // --isolate: each pass in a worker process
  bool no_isolate = false;        // --no-isolate: each pass in this process
  std::string pass_timeout;       // --pass-timeout SECONDS (implies --isolate)
  std::string pass_memory_limit;  // --pass-memory-limit MIB (implies it too)
};

}  // namespace fx::tools

#endif  // TOOLS_PASS_ISOLATION_ARGS_H_
