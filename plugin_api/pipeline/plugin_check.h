// `fx plugin-check`: a test kit for a pass plugin. Each pass of one plugin
// runs, with its default options, on a set of graph bundles (directories
// holding graph.fx.json and, optionally, input.pt: torch.save of the example
// inputs), and these checks are made on each graph:
//
//   runs           the pass succeeds in a worker process (a crash, an abort,
//                  a hang past the timeout or memory past the limit is this
//                  check's failure; a
//                  status INVALID_ARGUMENT, FAILED_PRECONDITION or
//                  UNIMPLEMENTED it returns declines the graph: skip);
//   lint           the graph it leaves passes Graph::lint;
//   numbers        the module computes on the example inputs what the
//                  unchanged module computes, within the tolerance the pass
//                  declares (FxPassInfo.tolerance, API version 6) or, when
//                  it declares none, the options' rtol/atol;
//   deterministic  two runs on fresh copies give byte-identical fx-graph
//                  JSON and equal weights;
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
// A pass that requires a property runs only on graphs where it already
// holds (the property's check passes); elsewhere its row is skipped. After a
// failure of `runs` or `lint` (or a declined graph), the other checks of
// that graph are skipped.
// A check's result over all graphs is FAIL when it failed on one (the
// reason names the graph), ok when it passed on one, else skip.
//
// The plugin is loaded in a worker process first (plugin_load_worker.h,
// under the pass timeout and memory limit): one that crashes, aborts, exits
// or hangs while loading is not checked further, and the report has the
// one failed check "loads" saying what ended the worker.
#ifndef PLUGIN_API_PIPELINE_PLUGIN_CHECK_H_
#define PLUGIN_API_PIPELINE_PLUGIN_CHECK_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace fx::host {

struct PluginCheckOptions {
  // Bundle directories to run the passes on.
  std::vector<std::string> graphs;
  double rtol = 1e-5;
  double atol = 1e-6;
  // Seconds a pass may take in the `runs` check (0: no limit), and MiB its
  // worker may grow by (0: no limit), so a runaway pass ends its worker.
  double pass_timeout_seconds = 60;
  uint64_t pass_memory_limit_mib = 4096;
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
// each of its sub-directories that does, sorted. InvalidArgument when there
// are none or the directory cannot be read.
absl::StatusOr<std::vector<std::string>> find_graph_bundles(
    const std::string& directory);

// Loads the plugin at `library` (in a worker process first) and checks
// every pass of it. Errors: the plugin does not load (a file that is not a
// plugin, a refused declaration), a bundle does not read. Check failures,
// and a plugin that crashes, exits or hangs while loading, are in the
// report, never errors.
absl::StatusOr<PluginCheckReport> check_plugin(
    const std::string& library, const PluginCheckOptions& options);

}  // namespace fx::host

#endif  // PLUGIN_API_PIPELINE_PLUGIN_CHECK_H_
