// The pass manager: builds a pipeline from a PipelineSpec against the passes
// a PassRegistry knows, then runs it on a PassTarget, one transaction per
// pass.
//
// Building (PassManager::create) checks everything before any pass runs:
// every pass exists, every option is declared and has the declared type, the
// order satisfies the passes' constraints (or, with automatic ordering, an
// order is found), and every pass print_after names is in the pipeline.
// Errors name the pass and option.
//
// Running, for each pass in order:
//  1. admission: a pass runs unless the pipeline has stopped or a property
//     it requires does not hold (an earlier producer failed); either way it
//     is recorded as not run, and an unmet requirement is a failure;
//  2. the call: take a snapshot of the graph (and start the attribute
//     journal), then call the pass through the C ABI; a returned status or
//     an exception that escaped the plugin is a failure. A pass that
//     PipelineSpec::isolate isolates (every pass, or under "auto" those of
//     plugins that are not trusted: pass_registry.h isolates(), decided at
//     create() into ScheduledPass::isolated) is called in a worker process
//     (pass_call.h): a crash, abort, timeout or exhausted memory limit
//     there is a failure of the pass, and the host's graph is untouched;
//  3. validation (unless verify_each is off): lint the graph, then check
//     every property the pass declares it produces (property_checks.h),
//     then the contract of a pass that keeps tensor_meta (declares neither
//     invalidates nor produces it while it holds): on a GraphModule, shape
//     propagation is run again and every node must still compute what its
//     tensor_meta says (tensor_meta_check.h);
//  4. on failure, rollback: the graph is exactly what it was before the
//     pass; the pipeline then stops or skips the pass (FailurePolicy);
//     on success, commit: whether the graph changed is measured (compared,
//     not taken from the pass's word; a pass that said changed=0 and
//     changed something gets a warning in its record) and the properties
//     are updated.
// Failures are reported in the PipelineReport (pipeline_report.h), never
// thrown.
//
// Instrumentation (pass_instrumentation.h) does everything else around the
// passes: per-pass wall time (always), print-after, progress, reproducers
// (standard_instrumentations.h), and any instrumentation the host registers
// with add_instrumentation.
#ifndef HOST_PIPELINE_PASS_MANAGER_H_
#define HOST_PIPELINE_PASS_MANAGER_H_

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "host/capi/c_api.h"
#include "host/pipeline/pass_instrumentation.h"
#include "host/pipeline/pass_registry.h"
#include "host/pipeline/pass_target.h"
#include "host/pipeline/pipeline.h"
#include "host/pipeline/pipeline_report.h"

namespace fx::host {

// Per-run settings of the standard instrumentations.
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

  // Registers `instrumentation` for every later run, after those registered
  // before it (pass_instrumentation.h gives the order of the hooks).
  void add_instrumentation(
      std::unique_ptr<PassInstrumentation> instrumentation);

  // Runs the pipeline. Pass failures are reported in the PipelineReport; the
  // target is then as it was before the failed pass. The instrumentations,
  // outermost first: progress (hooks.progress), print-after (the spec's
  // print_after, into hooks.print_after), reproducers (the spec's
  // reproducer_dir), those registered with add_instrumentation, timing.
  PipelineReport run(PassTarget& target, const RunHooks& hooks = {}) const;

  // The passes in the order they run, in pipeline text form.
  std::string text() const;
  const PipelineSpec& spec() const { return spec_; }
  const PassRegistry& registry() const { return *registry_; }
  // The passes in the order they run.
  const std::vector<ScheduledPass>& schedule() const { return schedule_; }

 private:
  PassManager() = default;

  const PassRegistry* registry_ = nullptr;
  PipelineSpec spec_;
  std::vector<ScheduledPass> schedule_;
  std::vector<std::unique_ptr<PassInstrumentation>> instrumentations_;
};

}  // namespace fx::host

#endif  // HOST_PIPELINE_PASS_MANAGER_H_
