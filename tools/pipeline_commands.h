// `fx plugins`, `fx run` and `fx dot`: listing plugins and running pipelines
// of their passes on graph files. Argument handling and printing only: the
// plugins are found by plugin_api/loader/plugin_discovery.h and loaded by
// host::load_plugins (pass_registry.h), the pipeline is read by
// plugin_api/pipeline/pipeline.h and run by the PassManager.
//
// Where plugins come from, in this order, each file loaded once:
//  1. the config's "plugins" (sha256-pinned when the config says so) and
//     "plugin_dirs";
//  2. --plugin PATH and --plugin-dir DIR;
//  3. the default directories (host::default_plugin_dirs): every entry of
//     $FX_PLUGIN_PATH (colon-separated) and the first-party plugins shipped
//     with the fx binary (its runfiles' plugins/ directory), unless
//     --no-default-plugins.
// Errors go to `err` prefixed with "fx plugins: ", "fx run: " or "fx dot: ";
// the exit status is 2 for usage and pipeline errors found before anything
// runs, 1 for everything else.
#ifndef TOOLS_PIPELINE_COMMANDS_H_
#define TOOLS_PIPELINE_COMMANDS_H_

#include <ostream>
#include <string>

#include "plugin_api/loader/plugin_discovery.h"

namespace fx::tools {

// fx plugins: every plugin, its passes and their options.
int run_plugins_command(const host::PluginSources& sources, std::ostream& out,
                        std::ostream& err);

struct RunArgs {
  std::string input;           // FILE (an fx-graph JSON file, weights optional)
  std::string pipeline;        // --pipeline TEXT
  std::string config;          // --config CONF.json
  std::string output;          // -o / --output OUT.fx.json
  std::string inputs;          // --inputs IN.pt: example inputs for the passes
  std::string print_after;     // --print-after PASS[,PASS] | all
  std::string reproducer_dir;  // --reproducer-dir DIR
  std::string on_failure;      // --on-failure stop|skip
  std::string ordering;        // --ordering explicit|auto
  bool progress = false;       // --progress: "[i/n] pass" on stderr
  bool timing = false;         // --time: the per-pass table on stdout
  host::PluginSources sources;
};

// fx run: runs the pipeline and writes OUT atomically; nothing is written
// when the pipeline stops at a failure (exit status 1).
int run_pipeline_command(const RunArgs& args, std::ostream& out,
                         std::ostream& err);

// fx dot: the graph as Graphviz DOT (the first-party `dot` pass), on stdout
// or in OUT (written atomically). With `pipeline`, those passes run first
// (e.g. "shape_prop{shapes=1x3x224x224}" so nodes show tensor_meta).
struct DotArgs {
  std::string input;
  std::string output;    // -o OUT.dot; stdout when empty
  std::string pipeline;  // --pipeline TEXT, run before drawing
  host::PluginSources sources;
};
int run_dot_command(const DotArgs& args, std::ostream& out, std::ostream& err);

}  // namespace fx::tools

#endif  // TOOLS_PIPELINE_COMMANDS_H_
