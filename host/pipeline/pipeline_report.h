// What a pipeline run reports: one PassRecord per scheduled pass, in run
// order, each failure on its pass's record, and the run's first failure.
//
// The pass manager fills `pass`, `plugin`, `outcome`, `changed`,
// `claimed_changed`, `error` and `failure`; the timing instrumentation (always
// on, see standard_instrumentations.h) fills `run_seconds` and
// `verify_seconds`; the reproducer instrumentation fills `reproducer`. Other
// instrumentations may read the report while it is being filled
// (pass_instrumentation.h).
#ifndef HOST_PIPELINE_PIPELINE_REPORT_H_
#define HOST_PIPELINE_PIPELINE_REPORT_H_

#include <string>
#include <vector>

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
  // Its failure as the run reports it ("pass 'x' of plugin 'p' (FILE)
  // failed and was rolled back: ..."); empty when it did not fail. Under
  // the skip policy every failed pass has one, not only the first.
  std::string failure;
  std::string reproducer;  // the reproducer directory of its failure
  // A contract the pass broke without failing, e.g. "it reported changed=0
  // but changed the graph or its attributes"; empty when none.
  std::string warning;
  bool isolated = false;  // it ran (or would have run) in a worker process
};

struct PipelineReport {
  std::vector<PassRecord> passes;
  // The first failure ("pass 'x' failed: ..."), empty when none; every
  // failure is on its pass's record.
  std::string failure;
  bool stopped = false;    // the pipeline stopped at the failure
  std::string reproducer;  // the first failure's reproducer, or empty

  bool ok() const { return failure.empty(); }
  bool changed() const;
  // "pass 'NAME': WARNING" for every pass with a warning, in run order.
  std::vector<std::string> warnings() const;
  // A table with one line per pass: name, outcome, run and verify wall time
  // in milliseconds, whether it changed the graph ("-" unless it ran), and
  // on the next line, indented, the pass's error when it has one, and its
  // warning ("warning: ...") when it has one.
  std::string summary() const;
};

}  // namespace fx::host

#endif  // HOST_PIPELINE_PIPELINE_REPORT_H_
