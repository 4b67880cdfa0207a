// `fx minimize`: the smallest subgraph a backend computes wrongly
// (host/minimizer/minimizer.h, torch.fx's net_min_base). Argument
// handling and printing only.
//
//   fx minimize FILE --inputs IN.pt (--pipeline TEXT | --config CONF.json)
//      [--plugin PATH]... [--plugin-dir DIR]... [--mode bisect|sequential]
//      [--atol X] [--rtol X] [--find-all]
//
// The backend is the pipeline applied to each checked subgraph, then run on
// the host (pipeline_backend.h); the reference is FILE unchanged, run by the
// host. Plugins are found as `fx run` finds them. Prints one line per check
// ("check 3: [layer3_0_conv1 .. fc (34 nodes)] mismatch, max |a-b| 0.8"),
// then "culprits: NAME[, NAME]..." or "no culprit: ...".
// Exit status: 0 the search ran (whether or not it found a culprit), 1 an
// error (a file, a plugin, a reference run), 2 usage and pipeline errors.
#ifndef TOOLS_MINIMIZE_COMMAND_H_
#define TOOLS_MINIMIZE_COMMAND_H_

#include <ostream>
#include <string>

#include "host/loader/plugin_discovery.h"
#include "tools/pass_isolation_args.h"

namespace fx::tools {

struct MinimizeArgs {
  std::string input;            // FILE
  std::string inputs;           // --inputs IN.pt (a tensor or a list of them)
  std::string pipeline;         // --pipeline TEXT
  std::string config;           // --config CONF.json
  std::string mode;             // --mode bisect|sequential ("" = bisect)
  std::string atol;             // --atol X ("" = the minimizer's default)
  std::string rtol;             // --rtol X
  bool find_all = false;        // --find-all
  PassIsolationArgs isolation;  // --isolate, --no-isolate, --pass-timeout ...
  host::PluginSources sources;
};

int run_minimize_command(const MinimizeArgs& args, std::ostream& out,
                         std::ostream& err);

}  // namespace fx::tools

#endif  // TOOLS_MINIMIZE_COMMAND_H_
