// `fx plugins`, `fx run` and `fx dot`: listing plugins and running pipelines
// of their passes on graph files. Argument handling and printing only: the
// plugins are found by host/loader/plugin_discovery.h and loaded by
// host::load_plugins (pass_registry.h), the pipeline is read by
// host/pipeline/pipeline.h and run by the PassManager.
//
// Where plugins come from, in this order, each file loaded once:
//  1. the config's "plugins" (sha256-pinned when the config says so) and
//     "plugin_dirs";
//  2. --plugin PATH and --plugin-dir DIR;
//  3. the default directories (host::default_plugin_dirs): every entry of
//     $FX_PLUGIN_PATH (colon-separated) and the first-party plugins shipped
//     with the fx binary (its runfiles' plugins/ directory, or an installed
//     SDK's lib/fx-sdk/plugins), unless --no-default-plugins.
// A library found in a directory that does not load is skipped with a
// warning on stderr ("fx run: warning: skipped plugin PATH: why"); a pass
// the pipeline names that no loaded plugin provides is then an error naming
// the skipped libraries. A file named by --plugin or a config's "plugins"
// that does not load is an error. When two plugins provide passes of the
// same name, the pipeline names them qualified ("acme.dce", "fx_passes.dce";
// `fx plugins` lists them so) and the bare name is an error.
// Errors go to `err` prefixed with "fx plugins: ", "fx run: " or "fx dot: ".
// Exit status, as LLVM's and MLIR's tools have it, non-zero whenever a pass
// failed:
//   0  every pass ran (or had nothing to do) and the output was written;
//   1  an error, or the pipeline stopped at a failed pass: nothing written;
//   2  usage and pipeline errors found before anything runs;
//   3  (kSkippedPassesStatus) passes failed and were skipped
//      (`--on-failure skip`, a pass's "on_failure": "skip"): each was
//      rolled back and is named on stderr, the rest of the pipeline ran and
//      the output was written without their changes.
//
// --pipeline TEXT may be a named pipeline (O1, O2, inference, or one among
// passes: "O1,dot"); stderr then names the passes that ran
// (named_pipeline_note). A named pipeline whose pass no loaded plugin
// provides is an error naming the pass and its first-party plugin; an
// unknown one-word pipeline names the known named pipelines.
//
// Isolation. By default ("isolate": "auto") a pass runs in a worker process
// unless its plugin is trusted: first-party (shipped beside fx) or pinned by
// sha256 in the config (host::trusted_plugin); stderr then names the passes
// that run isolated ("fx run: isolated (not pinned): a, b"). --isolate (or
// --pass-timeout, --pass-memory-limit, or the config's "isolate": true,
// "pass_timeout", "pass_memory_limit") isolates every pass; --no-isolate (or
// the config's "isolate": false) runs every pass in fx's process. A flag
// wins over the config, the config over the default. Isolated, each pass
// runs in a worker process (host/pipeline/pass_call.h); a pass that
// crashes, aborts, runs past the timeout or past the memory limit fails like
// one that returned an error (rolled back, named with what ended its worker, a
// reproducer written when asked), and fx run goes on as --on-failure says. Each
// plugin is loaded in a worker process first too (under the same timeout, or
// host::kPluginLoadTimeoutSeconds, and memory limit): one that crashes, aborts,
// exits or hangs while loading is a load error naming it and what ended the
// worker (exit status 1; a warning and skipped when it was found in a
// directory), never the end of fx.
//
// FILE may be a bundle (weights) or a bare graph file. A bare file that
// loads as a GraphModule without weights (a graph without parameters, as
// `fx exec` runs it) is run as one, so passes that run the graph
// (shape_prop) and --inputs work on it; one that does not load is still
// transformed as a graph, but --inputs then refuses it with the reason.
#ifndef TOOLS_PIPELINE_COMMANDS_H_
#define TOOLS_PIPELINE_COMMANDS_H_

#include <ostream>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "host/loader/plugin_discovery.h"
#include "host/pipeline/pass_manager.h"
#include "host/pipeline/pass_registry.h"
#include "tools/pass_isolation_args.h"

namespace fx::tools {

// The exit status of a run whose failed passes were skipped (see above).
inline constexpr int kSkippedPassesStatus = 3;

// Loads `sources` into `registry` (host::load_plugins, isolated as
// `isolation` says) and warns on `err` ("fx COMMAND: warning: ...") of every
// library a directory scan skipped.
absl::Status load_plugins_for(std::string_view command,
                              const host::PluginSources& sources,
                              host::PassRegistry& registry, std::ostream& err,
                              const host::LoadIsolation& isolation = {});

// --isolate, --no-isolate, --pass-timeout SECONDS and --pass-memory-limit
// MIB (each of the last two implies --isolate) over `spec`'s own settings,
// and "auto" when neither the flags nor the config choose, for fx run,
// reduce and minimize. Empty, or what is wrong with the flags.
std::string apply_isolation_flags(const PassIsolationArgs& flags,
                                  host::PipelineSpec& spec);

// Under "isolate": "auto", the line naming the passes that run isolated
// ("isolated (not pinned): a, b"); empty otherwise or when none does.
std::string auto_isolation_note(const host::PassManager& pm);

// When `pm`'s pipeline used a named pipeline (O1, O2, inference), the line
// naming it and the passes that ran ("named pipeline inference: ran
// shape_prop, fold_bn, ..."; then "; rolled back: ..." for failed ones);
// empty otherwise. fx run and fx exec print it on stderr.
std::string named_pipeline_note(const host::PassManager& pm,
                                const host::PipelineReport& report);

// fx pipelines: each named pipeline, its description, passes and engine.
int run_pipelines_command(std::ostream& out);

// fx plugins: every plugin, its passes and their options. With `isolate`
// (--isolate), each plugin is loaded in a worker process first, so one that
// crashes, exits or hangs while loading is an error naming it (a warning
// when it was found in a directory) instead of the end of fx.
int run_plugins_command(const host::PluginSources& sources, std::ostream& out,
                        std::ostream& err, bool isolate = false);

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
  PassIsolationArgs isolation;  // --isolate, --no-isolate, --pass-timeout ...
  bool progress = false;        // --progress: "[i/n] pass" on stderr
  bool timing = false;          // --time: the per-pass table on stdout
  host::PluginSources sources;
};

// fx run: runs the pipeline and writes OUT atomically; nothing is written
// when the pipeline stops at a failure (exit status 1), OUT is written and
// the status is kSkippedPassesStatus when failed passes were skipped.
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
