// `fx plugin-check`: a test kit for a pass plugin. Each pass of one plugin
// (or those PluginCheckOptions::passes names) runs, with its default
// options, on a set of graph bundles (directories holding graph.fx.json and,
// optionally, input.pt: torch.save of the example inputs), and these checks
// are made on each graph:
//
//   runs           the pass succeeds (a status INVALID_ARGUMENT,
//                  FAILED_PRECONDITION or UNIMPLEMENTED it returns declines
//                  the graph: skip);
//   lint           the graph it leaves passes Graph::lint;
//   numbers        the module computes on the example inputs what the
//                  unchanged module computes, within the tolerance the pass
//                  declares (FxPassInfo.tolerance, API version 6) or, when
//                  it declares none, the options' rtol/atol;
//   deterministic  two runs on fresh copies, in one process, give
//                  byte-identical fx-graph JSON and equal weights;
//   idempotent     only for a pass that declares it (FxPassInfo.idempotent,
//                  API version 6; otherwise skipped): the pass run again on
//                  its own output leaves byte-identical JSON and equal
//                  weights;
//   rollback       after the pass ran in a transaction that is then rolled
//                  back (a forced failure), the graph's JSON and weights are
//                  exactly those before it (pass_target.h);
//   contract       the pass manager's contracts: a pass claiming changed=0
//                  must not have changed anything, and one that neither
//                  produces nor invalidates tensor_meta must keep it current
//                  (tensor_meta_check.h) on graphs that carry it.
//
// Isolation: no pass runs in this process (the plugin is loaded here, after
// a worker loaded it; see below). Each check that runs the pass, or the
// module it made, runs in its own worker process (pass_worker.h), forked for
// it, under the pass timeout and memory limit (`runs` and `lint` share one:
// lint only reads what the run left). A crash, an abort, an exit, a hang past
// the timeout or memory past the limit ends that worker only and is that
// check's failure, naming what ended it ("the worker process was killed by
// SIGSEGV"); the other checks still run and the report is complete. So a
// pass that crashes only on its second run in a process fails
// `deterministic`, one that crashes on its own output fails `idempotent`.
//
// Before the pass: a prefix pipeline (PluginCheckOptions::before, e.g.
// "shape_prop") runs on each graph first, with the bundle's example inputs,
// each of its passes isolated (pass_call.h); the checks then start from what
// it left (the "unchanged module" of `numbers` included). Without one, a
// pass that requires 'tensor_meta' gets shape_prop first on a graph that
// lacks it, when the bundle has input.pt; without input.pt its row is
// skipped, saying so. A prefix that fails on a graph skips that graph's
// checks with its failure. The prefix's passes are looked up among the
// plugin's and those of PluginCheckOptions::before_sources (the first-party
// plugins by default), loaded (each in a worker first) only when a prefix
// is needed.
//
// A pass that requires a property runs only on graphs where it holds (after
// the prefix); elsewhere its row is skipped. After a failure of `runs` or
// `lint` (or a declined graph), the other checks of that graph are skipped.
// A check's result over all graphs is FAIL when it failed on one (the
// reason names the graph), ok when it passed on one, else skip.
//
// The plugin is loaded in a worker process first (plugin_load_worker.h,
// under the pass timeout and memory limit): one that crashes, aborts, exits
// or hangs while loading is not checked further, and the report has the
// one failed check "loads" saying what ended the worker.
#ifndef HOST_PLUGIN_CHECK_PLUGIN_CHECK_H_
#define HOST_PLUGIN_CHECK_PLUGIN_CHECK_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "host/loader/plugin_discovery.h"

namespace fx::host {

struct PluginCheckOptions {
  // Bundle directories to run the passes on.
  std::vector<std::string> graphs;
  double rtol = 1e-5;
  double atol = 1e-6;
  // Seconds a check's worker may take (0: no limit), and MiB it may grow by
  // (0: no limit), so a runaway pass ends its worker. The same limits hold
  // for each pass of the prefix and for loading plugins in workers.
  double pass_timeout_seconds = 60;
  uint64_t pass_memory_limit_mib = 4096;
  // The passes to check, by their own or qualified names ("dce",
  // "fx_passes.dce"), in the plugin's order; empty: every pass.
  std::vector<std::string> passes;
  // A pipeline in text form (pipeline.h) run on each graph before the
  // checked pass; empty: none, but shape_prop for a pass requiring
  // 'tensor_meta' (see above).
  std::string before;
  // Where the prefix's passes come from besides the plugin itself.
  PluginSources before_sources;
};

enum class CheckOutcome { kOk, kFail, kSkip };

struct CheckResult {
  CheckOutcome outcome = CheckOutcome::kSkip;
  std::string reason;  // why it failed or was skipped; empty when ok
};

// The checks, in the table's column order.
inline constexpr std::array<std::string_view, 7> kPluginChecks = {
    "runs",       "lint",     "numbers", "deterministic",
    "idempotent", "rollback", "contract"};

struct PassCheckRow {
  std::string pass;
  std::array<CheckResult, kPluginChecks.size()> results;
};

struct PluginCheckReport {
  // The plugin's description (Plugin::describe), or "plugin file 'PATH'"
  // when it did not load.
  std::string plugin;
  std::vector<PassCheckRow> rows;
  // Why the plugin did not load in its worker process (then `rows` is
  // empty), or empty.
  std::string load_failure;
  // False when any check of any pass failed, or the plugin did not load.
  bool ok() const;
  // One line per pass and check: "PASS  CHECK  ok|FAIL|skip  REASON" (the
  // reason's first line); after a load failure, the one line
  // "(plugin)  loads  FAIL  REASON".
  std::string table() const;
};

// The bundles under `directory`: itself when it holds graph.fx.json, else
// each of its sub-directories that does (hidden ones, a crashed writer's
// temporaries, skipped), sorted. InvalidArgument when there are none or the
// directory cannot be read.
absl::StatusOr<std::vector<std::string>> find_graph_bundles(
    const std::string& directory);

// Loads the plugin at `library` (in a worker process first) and checks its
// passes. Errors: the plugin does not load (a file that is not a plugin, a
// refused declaration); `options.passes` names a pass the plugin lacks (the
// message names those it has); `options.before` does not parse or names a
// pass no loaded plugin provides, or a plugin of `before_sources` does not
// load; a bundle's inputs do not read; a bundle's graph does not load (every
// such bundle named, one line each, and nothing checked). Check failures,
// and a plugin that crashes, exits or hangs while loading, are in the
// report, never errors. While the checks run, the bundles' files are the
// process's published inputs (fx_core/io/output_rule.h): a file a pass
// writes through the host (WriteOutputFile) is never one of them.
absl::StatusOr<PluginCheckReport> check_plugin(
    const std::string& library, const PluginCheckOptions& options);

}  // namespace fx::host

#endif  // HOST_PLUGIN_CHECK_PLUGIN_CHECK_H_
