// The op-coverage suite's runner: every bundle that tools/opinfo_export.py
// wrote (PyTorch's OpInfo database, float32 CPU samples, one-node graphs) is
// loaded with fx::read_graph_module, run with GraphModule::forward and compared
// with PyTorch eager's result (expected.pt):
//
//   - tensors: same dtype, same shape, and allclose(rtol 1e-4, atol 1e-5,
//     equal_nan) (bool tensors: equal); for a case the exporter found not
//     reproducible in eager (uninitialised memory, as empty_like gives) only
//     dtype and shape;
//   - the same structure: a tuple for a tuple (torch.return_types included),
//     a list for a list, int for int, float for float (same tolerance), bool
//     for bool, None for None.
//
// Each case ends as a match or a failure with a reason: a load error, an
// error of the graph's run (a missing kernel, an argument no overload takes,
// a kernel's own error), or a mismatch. Reasons are the first line of the
// message, the case's directory left out, so equal causes group together.
#ifndef TOOLS_OPINFO_RUNNER_H_
#define TOOLS_OPINFO_RUNNER_H_

#include <ATen/core/ivalue.h>

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fx::opinfo {

// rtol / atol of the comparison (torch.allclose's arguments).
inline constexpr double kRtol = 1e-4;
inline constexpr double kAtol = 1e-5;

struct CaseResult {
  std::string op;       // OpInfo name ("nn.functional.conv2d", "max.binary")
  std::string variant;  // "function" or "method"
  int sample = -1;      // sample index; -1 for a whole op the exporter skipped
  std::string dir;      // bundle directory, relative to the index
  std::string target;   // the node's target
  std::string call;     // the sample's arguments ("(float32[5, 5], alpha=2)")
  // Where the case ended.
  enum class Status { kNotExported, kLoadError, kRunError, kMismatch, kMatch };
  Status status = Status::kNotExported;
  bool values_compared = true;  // false: eager was not reproducible
  std::string reason;           // group key: the message's first line
  std::string detail;           // more of it (the differing values, ...)
  double seconds = 0;           // load + run + compare
};

struct Summary {
  std::string torch_version;
  int ops = 0;  // OpInfo entries in the index
  int max_samples_per_op = 0;
  std::vector<CaseResult> cases;
  int count(CaseResult::Status status) const;
  int exported() const;  // cases with a bundle
  int loaded() const;    // ... that loaded
  int ran() const;       // ... that ran without an error
  int matched() const;
  int matched_without_values() const;  // matches of unreproducible cases
  double match_rate() const;           // matched / exported
};

// Compares a result with the expected one as described above. Empty when they
// match; otherwise what differs, first line the reason ("values differ").
std::string compare_results(const c10::IValue& got, const c10::IValue& want,
                            bool compare_values);

struct RunOptions {
  std::ostream* lines = nullptr;  // one result line per case, as it goes
  // Writes what a mismatching case computed as `output.pt` beside its
  // expected.pt, for a look from Python.
  bool save_mismatches = false;
};

// Loads, runs and compares one case (dir relative to `base_dir`). `seed`
// seeds LibTorch's generator before the run, as the exporter seeded eager.
CaseResult run_case(const std::string& base_dir, const std::string& dir,
                    int64_t seed, bool reproducible,
                    const RunOptions& options = {});

// Reads the index (index.json) and runs every exported case.
absl::StatusOr<Summary> run_index(const std::string& index_path,
                                  const RunOptions& options = {});

// One line: "MATCH op function #3 torch.add (float32[5], float32[])" or
// "FAIL ... : reason".
std::string result_line(const CaseResult& result);

// Reasons with their counts, most frequent first, for the failures (run,
// load, mismatch) or for the cases not exported.
struct ReasonCount {
  std::string reason;
  int count = 0;
  std::string example;  // the first case: "op variant #sample"
  int ops = 0;          // distinct OpInfo entries
};
std::vector<ReasonCount> failure_reasons(const Summary& summary);
std::vector<ReasonCount> skip_reasons(const Summary& summary);

// The summary table (markdown) and the whole summary with every case (JSON).
std::string summary_markdown(const Summary& summary);
std::string summary_json(const Summary& summary);

}  // namespace fx::opinfo

#endif  // TOOLS_OPINFO_RUNNER_H_
