// `fx plugins` and `fx run`: listing plugins and running pipelines of their
// passes on graph files (the C ABI issue's part of the fx command).
//
// Where plugins come from, in this order, each file loaded once:
//  1. the config's "plugins" (sha256-pinned when the config says so) and
//     "plugin_dirs";
//  2. --plugin PATH and --plugin-dir DIR;
//  3. the default directories: every entry of $FX_PLUGIN_PATH
//     (colon-separated) and the first-party plugins shipped with the fx
//     binary (its runfiles' plugins/ directory).
#ifndef TOOLS_PIPELINE_COMMANDS_H_
#define TOOLS_PIPELINE_COMMANDS_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace fx::host {
class PassRegistry;
}  // namespace fx::host

namespace fx::tools {

// Step 3's directories, those that exist.
std::vector<std::string> default_plugin_dirs();

struct PluginSources {
  std::vector<std::string> plugins;      // --plugin
  std::vector<std::string> plugin_dirs;  // --plugin-dir
  bool default_dirs = true;              // add step 3
};

// Loads the plugins `sources` names (steps 2 and 3) into `registry`.
absl::Status load_plugins(const PluginSources& sources,
                          host::PassRegistry& registry);

// fx plugins: every plugin, its passes and their options.
int run_plugins_command(const PluginSources& sources, std::ostream& out,
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
  bool progress = false;       // --progress
  bool timing = false;         // --time: the per-pass table on stdout
  PluginSources sources;
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
  PluginSources sources;
};
int run_dot_command(const DotArgs& args, std::ostream& out, std::ostream& err);

}  // namespace fx::tools

#endif  // TOOLS_PIPELINE_COMMANDS_H_
