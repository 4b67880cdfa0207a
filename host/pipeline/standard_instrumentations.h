// The pass manager's own instrumentations (pass_instrumentation.h explains
// the hooks). PassManager::run installs them from the pipeline's settings
// and its RunHooks; hosts may also build and register them themselves, e.g.
// to print the graph after some passes into a stream of their own.
#ifndef HOST_PIPELINE_STANDARD_INSTRUMENTATIONS_H_
#define HOST_PIPELINE_STANDARD_INSTRUMENTATIONS_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "host/pipeline/pass_instrumentation.h"

namespace fx::host {

// Wall time of each pass into its PassRecord: `run_seconds` from
// run_before_pass to run_after_pass_call (the call alone), `verify_seconds`
// around verification. Always installed, innermost.
class PassTimingInstrumentation : public PassInstrumentation {
 public:
  void run_before_pass(const PassEvent& event) override;
  void run_after_pass_call(const PassEvent& event) override;
  void run_before_verification(const PassEvent& event) override;
  void run_after_verification(const PassEvent& event) override;

 private:
  std::chrono::steady_clock::time_point start_;
};

// Print-after: after each pass that ran and is selected, writes
//   // -----// graph after NAME //----- //
// and the graph text (Graph::str()) to `out`, which must outlive it.
// Installed when the pipeline sets print_after or print_after_all.
class IrPrintingInstrumentation : public PassInstrumentation {
 public:
  // Every pass when `all`, else those named in `passes`.
  IrPrintingInstrumentation(std::ostream& out, bool all,
                            std::vector<std::string> passes);
  void run_after_pass(const PassEvent& event) override;

 private:
  std::ostream& out_;
  bool all_;
  std::vector<std::string> passes_;
};

// Progress: before each pass, calls `report(i, n, name)`: its 1-based
// position, the number of scheduled passes and its name. Installed when
// RunHooks::progress is set.
class ProgressInstrumentation : public PassInstrumentation {
 public:
  using Callback = std::function<void(size_t, size_t, std::string_view)>;
  explicit ProgressInstrumentation(Callback report);
  void run_before_pass(const PassEvent& event) override;

 private:
  Callback report_;
};

// Reproducers: when a pass fails (each one that fails, when the pipeline
// goes on past failures), writes into a new directory
// DIR/PASS-YYYYmmdd-HHMMSS-PID
//   graph.fx.json  the graph the pass received (the rolled-back target),
//                  with its weights file beside it;
//   inputs.pt      the example inputs the passes saw, when there were any;
//   plugins/       a copy of every plugin loaded from a file;
//   pipeline.json  the rest of the pipeline from that pass, options bound,
//                  every plugin pinned by sha256 at its copy's path
//                  relative to the directory, the properties that held
//                  before it as "assume";
//   README.txt     the failure and the command that reproduces it, run in
//                  the directory (`--no-default-plugins`: the copies are
//                  the plugins);
// Nothing in it names a path outside it, so it can be moved or sent.
// A pass run in process is given its reproducer before it runs (its README
// says the process ended during the pass), removed when the pass returns:
// one that crashes, exits or hangs the process still leaves it.
// It sets the failed pass's PassRecord::reproducer to the directory, and
// PipelineReport::reproducer to the first failure's (they stay empty when
// the directory could not be written). Installed when the pipeline sets
// reproducer_dir.
class ReproducerInstrumentation : public PassInstrumentation {
 public:
  explicit ReproducerInstrumentation(std::string dir);
  void run_before_pipeline(const PipelineEvent& event) override;
  void run_before_pass(const PassEvent& event) override;
  void run_after_pass(const PassEvent& event) override;
  void run_after_pass_failed(const PassEvent& event) override;

 private:
  std::string dir_;
  std::string pending_;  // written before an in-process pass, until it ends
};

// Fatal signals and exits inside a pass, named. While a pass's run function
// is being called (run_before_pass to run_after_pass_call), a SIGSEGV,
// SIGBUS, SIGILL, SIGFPE or SIGABRT in the process writes
//   PREFIX: fatal signal SIGSEGV in pass 'NAME' of plugin 'P' (FILE); ...
// ("in another thread ... during pass" when it is not the pass's thread)
// to stderr (fd 2, async-signal-safe writes only), then the signal takes
// its previous disposition (the process dies of it, as it would have); one
// after the pass returned (a thread the plugin left running) is named with
// the last pass ("after pass 'NAME' ... returned"). exit() or quick_exit()
// during a pass writes "PREFIX: the process was ended (exit or quick_exit)
// during pass 'NAME' ..." and ends the process with kPluginExitStatus,
// whatever status the plugin gave (_exit cannot be seen: run untrusted
// plugins with --isolate). The pass runs in-process, so nothing else can be
// saved: the graph and its output file are left as they were (fx run
// writes only after the pipeline). Before any pass the handler only passes
// the signal on.
// Process-wide: the handlers are installed (on an alternate stack, so a
// stack overflow is named too) by the first instance and stay; with several
// pass managers running at once, the message names the last pass begun.
// Not installed by PassManager::run: a host opts in (fx run does), as
// signal handlers belong to the program.
inline constexpr int kPluginExitStatus = 70;  // EX_SOFTWARE

class FatalSignalInstrumentation : public PassInstrumentation {
 public:
  // `prefix` starts the message ("fx run").
  explicit FatalSignalInstrumentation(std::string_view prefix);
  void run_before_pass(const PassEvent& event) override;
  void run_after_pass_call(const PassEvent& event) override;
};

}  // namespace fx::host

#endif  // HOST_PIPELINE_STANDARD_INSTRUMENTATIONS_H_
