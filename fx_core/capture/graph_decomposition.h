// A decomposition written as a graph (the C ABI's RegisterDecomposition,
// plugin_api.h version 4): a plugin builds the replacement of an ATen
// operator with the graph-building calls (placeholders, call_function nodes
// with `torch.ops.aten.NAME.OVERLOAD` targets, one output), and fx::make_fx
// records the calls the graph makes in the operator's place, as make_fx's
// decomposition_table does for a Python function making the same calls.
//
// The replacement's contract, checked when it is made:
//   - one placeholder per argument of the operator's schema, in schema order
//     (its defaults filled in when the captured code left them out);
//   - only placeholder, call_function and output nodes; every call_function
//     target one the runtime can call (torch.ops.aten.*, torch.*,
//     operator.getitem, ...), run with Python's argument rules;
//   - the output: the result for an operator with one return, a list or
//     tuple of as many values as the schema returns otherwise.
#ifndef FX_CORE_CAPTURE_GRAPH_DECOMPOSITION_H_
#define FX_CORE_CAPTURE_GRAPH_DECOMPOSITION_H_

#include <memory>
#include <string>

#include "fx_core/capture/make_fx.h"
#include "fx_core/ir/graph.h"

namespace fx::capture {

// A Decomposition of operator `op` ("aten::silu", "aten::add.Tensor") that
// runs `replacement` (copied) on the operator's arguments. Throws
// fx::FxError naming `op` (and the node at fault) when `op` does not exist
// or `replacement` breaks the contract above.
Decomposition graph_decomposition(const std::string& op,
                                  const Graph& replacement);

}  // namespace fx::capture

#endif  // FX_CORE_CAPTURE_GRAPH_DECOMPOSITION_H_
