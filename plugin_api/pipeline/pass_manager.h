// The pass manager: builds a pipeline from a PipelineSpec against the passes
// a PassRegistry knows, then runs it on a PassTarget, one transaction per
// pass.
//
// Building (PassManager::create) checks everything before any pass runs:
// every pass exists, every option is declared and has the declared type, the
// order satisfies the passes' constraints (or, with automatic ordering, an
// order is found). Errors name the pass and option.
//
// Running, for each pass:
//  1. take a snapshot of the graph (and start the attribute journal);
//  2. call the pass through the C ABI; a returned status, an exception that
//     escaped the plugin, or a pass whose required properties no longer hold
//     (an earlier producer failed) is a failure;
//  3. verify (unless verify_each is off): lint the graph, then check every
//     property the pass declares it produces (property_checks.h);
//  4. on failure, roll back: the graph is exactly what it was before the
//     pass; the pipeline then stops or skips the pass (FailurePolicy), and,
//     when a reproducer directory is set, writes a reproducer there: the
//     pass's input graph, a config that runs the rest of the pipeline with
//     the plugins pinned by hash, and a README with the command.
// Instrumentation: per-pass wall time (run and verify), whether the graph
// changed (compared, not taken from the pass's word), print-after, and a
// progress callback.
#ifndef PLUGIN_API_PIPELINE_PASS_MANAGER_H_
#define PLUGIN_API_PIPELINE_PASS_MANAGER_H_

#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "plugin_api/capi/c_api.h"
#include "plugin_api/pipeline/pass_registry.h"
#include "plugin_api/pipeline/pass_target.h"
#include "plugin_api/pipeline/pipeline.h"

namespace fx::host {

// What happened to one pass of a run.
struct PassRecord {
  enum class Outcome { kRan, kRolledBack, kNotRun };
  std::string pass;
  std::string plugin;
  Outcome outcome = Outcome::kNotRun;
  bool changed = false;          // the graph or an attribute differs
  bool claimed_changed = false;  // what the pass said
  double run_seconds = 0;
  double verify_seconds = 0;
  std::string error;  // why it was rolled back or not run
};

struct PipelineReport {
  std::vector<PassRecord> passes;
  // The first failure ("pass 'x' failed: ..."), empty when none.
  std::string failure;
  bool stopped = false;    // the pipeline stopped at the failure
  std::string reproducer;  // the reproducer directory written, or empty

  bool ok() const { return failure.empty(); }
  bool changed() const;
  // One line per pass: outcome, wall times, changed, error.
  std::string summary() const;
};

struct RunHooks {
  // Where print-after text goes (stdout when null).
  std::ostream* print_after = nullptr;
  // Called before each pass: (1-based index, total, pass name).
  std::function<void(size_t, size_t, std::string_view)> progress;
};

class PassManager {
 public:
  // Resolves, binds and orders `spec`'s passes. `registry` must outlive the
  // PassManager.
  static absl::StatusOr<PassManager> create(const PassRegistry& registry,
                                            PipelineSpec spec);

  // Runs the pipeline. Pass failures are reported in the PipelineReport; the
  // target is then as it was before the failed pass.
  PipelineReport run(PassTarget& target, const RunHooks& hooks = {}) const;

  // The passes in the order they run, in pipeline text form.
  std::string text() const;
  const PipelineSpec& spec() const { return spec_; }

 private:
  struct Scheduled {
    const RegisteredPass* pass;
    PassInvocation invocation;
    FxOptions options;
    FailurePolicy on_failure;
  };
  PassManager() = default;

  // Writes a reproducer for schedule_[failed]; `holding` are the properties
  // that held before it. Returns the directory, or empty when it could not
  // be written.
  std::string write_reproducer(const PassTarget& target, size_t failed,
                               std::vector<std::string> holding,
                               const std::string& error) const;

  const PassRegistry* registry_ = nullptr;
  PipelineSpec spec_;
  std::vector<Scheduled> schedule_;
};

}  // namespace fx::host

#endif  // PLUGIN_API_PIPELINE_PASS_MANAGER_H_
