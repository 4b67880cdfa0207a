// Pass instrumentation: code that watches a pipeline run without being part
// of it (after MLIR's PassInstrumentation). The pass manager's run loop only
// runs passes, verifies, rolls back and commits; everything else it does
// around a pass is an instrumentation:
//   - PassTimingInstrumentation   per-pass run and verify wall time (always);
//   - IrPrintingInstrumentation   print-after (the graph text after a pass);
//   - ProgressInstrumentation     "pass i of n" before each pass;
//   - ReproducerInstrumentation   a reproducer for the first failed pass;
// (standard_instrumentations.h), and whatever a host adds.
//
// Adding one (a vendor's, say): derive from PassInstrumentation, override the
// hooks you need, and register it on the PassManager before running:
//
//   class CountNodes : public fx::host::PassInstrumentation {
//    public:
//     void run_after_pass(const fx::host::PassEvent& e) override {
//       std::cerr << e.name() << ": " << e.target.graph().size()
//                 << " nodes\n";
//     }
//   };
//   pm.add_instrumentation(std::make_unique<CountNodes>());
//
// The hooks of one pass, in order (a pass that is not run, because the
// pipeline stopped or a property it requires does not hold, gets none):
//   run_before_pass          the transaction has begun (a snapshot is taken)
//                            and the pass is about to be called;
//   run_after_pass_call      its run function returned or threw; nothing is
//                            verified, committed or rolled back yet;
//   run_before_verification  \ only when the call succeeded and the pipeline
//   run_after_verification   / verifies (verify_each): lint + `produces`;
//   then exactly one of
//   run_after_pass           it succeeded and was committed; the record says
//                            whether it changed the graph;
//   run_after_pass_failed    it failed and was rolled back: the target is
//                            again the pass's input; the record's `error`
//                            and `failure` and, for the first failure, the
//                            report's `failure` are set.
// run_before_pipeline comes before the first pass, run_after_pipeline after
// the last, once the target has finished (a GraphModule is recompiled).
//
// Order: "before" hooks run in the order the instrumentations were
// registered, "after" hooks (run_after_*) in the reverse order, so each
// instrumentation's pair of hooks nests around those registered after it.
// The standard instrumentations come first, the host's next, and timing last,
// innermost, so that no hook is timed as part of a pass.
//
// Contract: a hook must not run passes or edit the target's graph (the pass
// manager snapshots, compares and rolls back around them); it may fill the
// report (the timing and reproducer instrumentations do). Hooks must not
// throw. An instrumentation registered on a PassManager serves every run of
// it: keep per-run state reset in run_before_pipeline, and do not run one
// PassManager on two threads at once when its instrumentations keep state.
#ifndef HOST_PIPELINE_PASS_INSTRUMENTATION_H_
#define HOST_PIPELINE_PASS_INSTRUMENTATION_H_

#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fx/plugin_api.h"
#include "host/capi/c_api.h"
#include "host/pipeline/pass_registry.h"
#include "host/pipeline/pass_target.h"
#include "host/pipeline/pipeline.h"
#include "host/pipeline/pipeline_report.h"

namespace fx::host {

// One pass of a built pipeline, as the pass manager runs it.
struct ScheduledPass {
  const RegisteredPass* pass;  // the pass and its plugin (in the registry)
  PassInvocation invocation;   // as written in the pipeline
  FxOptions options;           // every option of its schema, bound
  FailurePolicy on_failure;    // its own policy, or else the pipeline's
  bool isolated = false;       // runs in a worker (PipelineSpec::isolate)
};

// What every hook is told: the pipeline and the run so far.
struct PipelineEvent {
  const PipelineSpec& spec;                    // the pipeline's settings
  const std::vector<ScheduledPass>& schedule;  // every pass, in run order
  const PassRegistry& registry;                // where the passes come from
  PassTarget& target;                          // what the passes transform
  PipelineReport& report;  // one record per scheduled pass, filled as run
};

// What a pass's hooks are told, besides the pipeline.
struct PassEvent : PipelineEvent {
  size_t index;  // the pass's position in `schedule` and `report.passes`
  // The properties that hold before the pass ran; in run_after_pass, those
  // that hold after it.
  const std::set<std::string>& holding;

  const ScheduledPass& pass() const { return schedule[index]; }
  const FxPassInfo& info() const { return *pass().pass->info; }
  std::string_view name() const { return info().name; }
  PassRecord& record() const { return report.passes[index]; }
};

// The hooks; each does nothing unless overridden.
class PassInstrumentation {
 public:
  virtual ~PassInstrumentation();

  virtual void run_before_pipeline(const PipelineEvent& event) {}
  virtual void run_before_pass(const PassEvent& event) {}
  virtual void run_after_pass_call(const PassEvent& event) {}
  virtual void run_before_verification(const PassEvent& event) {}
  virtual void run_after_verification(const PassEvent& event) {}
  virtual void run_after_pass(const PassEvent& event) {}
  virtual void run_after_pass_failed(const PassEvent& event) {}
  virtual void run_after_pipeline(const PipelineEvent& event) {}
};

}  // namespace fx::host

#endif  // HOST_PIPELINE_PASS_INSTRUMENTATION_H_
