// Structural equality of two graphs: the same nodes in the same order with
// the same opcode, name, target, type annotation (and the graph text set
// for it), args, kwargs and meta (node references compared by name). What
// the pass manager uses to tell whether a pass really changed the graph, in
// one linear walk.
#ifndef HOST_PIPELINE_GRAPH_EQUALITY_H_
#define HOST_PIPELINE_GRAPH_EQUALITY_H_

#include "fx_core/ir/graph.h"

namespace fx::host {

bool structurally_equal(const Graph& a, const Graph& b);

}  // namespace fx::host

#endif  // HOST_PIPELINE_GRAPH_EQUALITY_H_
