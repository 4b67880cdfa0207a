// Reduction of a failing graph, as llvm-reduce does it: nodes are removed
// one at a time while the same failure persists, until no removal keeps it.
//
// Removing a node: its uses are replaced by one of its input nodes (each
// tried in turn) or by a new placeholder, the node is erased, and dead code
// is eliminated; then placeholders without users are dropped. A candidate
// that does not lint is discarded. The probe decides whether a candidate
// still fails the same way: it returns the failure's category ("pass 'x':
// INTERNAL"), empty when the candidate does not fail; a candidate is kept
// when its category equals the original graph's. Rounds over all nodes,
// last to first, repeat until one removes nothing.
#ifndef HOST_MINIMIZER_GRAPH_REDUCER_H_
#define HOST_MINIMIZER_GRAPH_REDUCER_H_

#include <cstddef>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "fx_core/format/graph_json.h"

namespace fx::host {

// A copy of `file` that the reducer (and a probe) may change: the graph
// snapshotted, the modules, weights path and directory copied.
GraphFile copy_of(const GraphFile& file);

// The failure category of running something on `file`, or empty.
using FailureProbe = std::function<std::string(const GraphFile& file)>;

struct ReduceResult {
  GraphFile file;       // the smallest graph found (same modules)
  std::string failure;  // the category that persisted
  size_t nodes_before = 0;
  size_t nodes_after = 0;
  size_t attempts = 0;  // candidates probed
};

// FailedPrecondition when `file` does not fail to begin with.
absl::StatusOr<ReduceResult> reduce_graph(const GraphFile& file,
                                          const FailureProbe& probe);

}  // namespace fx::host

#endif  // HOST_MINIMIZER_GRAPH_REDUCER_H_
