// The net minimizer: the smallest subgraph a backend computes wrongly
// (torch.fx's net_min_base, torch 1.13, on our GraphModule).
//
// The reference is the unchanged graph run by the host on `inputs`; every
// node's value is kept. A check of a set of nodes:
//  1. extracts them as a child graph (fuse_by_partitions on a copy: values
//     from outside become placeholders, the nodes used outside become the
//     outputs) and builds two GraphModules of it sharing the module's
//     attributes;
//  2. feeds both the reference values of the placeholders, runs one on the
//     host (run a) and hands the other to the backend (run b), which may
//     transform it before running it;
//  3. compares the outputs: tensors of equal shape and dtype, close within
//     |a - b| <= atol + rtol * |b| (NaN equal to NaN), other values equal.
// A backend that fails (an error status or an exception) is a mismatch, as
// net_min_base counts run errors.
//
// The candidates are the compute nodes (call_function, call_method,
// call_module) in graph order. Modes:
//  - bisect: check all of them; on a mismatch split in halves and search the
//    first, then (or when the first has no culprit) the second; a single node
//    that mismatches is the culprit; without find_all the first culprit found
//    ends the search. A range that mismatches while neither half does is
//    reported in the steps, not as a culprit (net_min_base's "unable to
//    minimize").
//  - sequential: each node alone, in order; with find_all every culprit.
// A set whose nodes are used nowhere outside it has no outputs to compare and
// is a match.
#ifndef HOST_MINIMIZER_MINIMIZER_H_
#define HOST_MINIMIZER_MINIMIZER_H_

#include <ATen/core/ivalue.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace fx {
class GraphModule;
}  // namespace fx

namespace fx::host {

enum class MinimizeMode { kBisect, kSequential };

// "bisect" / "sequential"; anything else is InvalidArgument
// (expected "bisect" or "sequential", got "x").
absl::StatusOr<MinimizeMode> parse_minimize_mode(std::string_view word);

struct MinimizerOptions {
  MinimizeMode mode = MinimizeMode::kBisect;
  double atol = 1e-4;
  double rtol = 1e-4;
  bool find_all = false;  // every culprit, not only the first
};

// Runs a subgraph on the backend: `subgraph` is a fresh GraphModule the
// backend may transform; `inputs` are its placeholders' values. Returns its
// output (run b), or an error status saying why the backend failed.
using BackendRun = std::function<absl::StatusOr<c10::IValue>(
    GraphModule& subgraph, const std::vector<c10::IValue>& inputs)>;

// One check, in the order made.
struct MinimizerStep {
  enum class Outcome { kMatch, kMismatch, kBackendError };
  std::vector<std::string> nodes;  // the checked nodes' names
  Outcome outcome = Outcome::kMatch;
  double max_abs_diff = 0;  // over the outputs' tensors (inf: not comparable)
  std::string detail;       // the backend's error, or what differed
};

struct MinimizerResult {
  std::vector<std::string> culprits;  // node names, in graph order
  std::vector<MinimizerStep> steps;
};

// Minimizes `module` on `inputs` (one per placeholder). Errors (not
// mismatches): inputs that do not fit the graph, a reference run that fails.
absl::StatusOr<MinimizerResult> minimize(GraphModule& module,
                                         const std::vector<c10::IValue>& inputs,
                                         const BackendRun& backend,
                                         const MinimizerOptions& options = {});

// "[layer1_0_relu, add_3] mismatch, max |a-b| 0.5" (one line, no newline).
std::string describe(const MinimizerStep& step);

}  // namespace fx::host

#endif  // HOST_MINIMIZER_MINIMIZER_H_
