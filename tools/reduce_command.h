// `fx reduce FILE --pipeline TEXT [-o OUT] [--inputs IN.pt] [--isolate]
// [--pass-timeout S] [--pass-memory-limit MIB] [--plugin PATH]...
// [--plugin-dir DIR]...`: shrinks FILE while the pipeline keeps failing the
// same way (host/minimizer/graph_reducer.h, pipeline_probe.h) and
// writes the smallest graph found to OUT (default: FILE's name with
// `.reduced.fx.json`), atomically, with the weights it uses beside it.
//
// --inputs IN.pt: example inputs for the passes (GraphExampleInput), as
// `fx run --inputs` takes them: a torch.save of a tensor, of a list or tuple
// of tensors (one batch, one per placeholder) or of a list of such batches
// (calibration data). FILE runs once on each batch first (fx::Interpreter),
// keeping what every node computed; each candidate is then run with the
// inputs its placeholders stand for: an original placeholder gets its
// input, and one the reduction put in place of a node N (graph_reducer.cc
// names it `N_input`) gets what N computed on that batch, so passes that
// need example inputs or tensor_meta (shape_prop first) reduce as they
// fail. A candidate with a placeholder that no tensor stands for is not
// kept. FILE must then load as a GraphModule and run on the inputs.
//
// Exit status: 0 when reduced and written, 1 when FILE does not fail or
// something does not load, run or write (--inputs included), 2 for a usage
// error.
#ifndef TOOLS_REDUCE_COMMAND_H_
#define TOOLS_REDUCE_COMMAND_H_

#include <ostream>
#include <string>

#include "host/loader/plugin_discovery.h"
#include "tools/pass_isolation_args.h"

namespace fx::tools {

struct ReduceArgs {
  std::string input;            // FILE
  std::string pipeline;         // --pipeline TEXT
  std::string output;           // -o OUT, or empty for the default
  std::string inputs;           // --inputs IN.pt, or empty for none
  PassIsolationArgs isolation;  // --isolate, --no-isolate, --pass-timeout ...
  host::PluginSources sources;
};

// OUT when none is given: `dir/name.fx.json` -> `dir/name.reduced.fx.json`.
std::string default_reduce_output(const std::string& input);

int run_reduce_command(const ReduceArgs& args, std::ostream& out,
                       std::ostream& err);

}  // namespace fx::tools

#endif  // TOOLS_REDUCE_COMMAND_H_
