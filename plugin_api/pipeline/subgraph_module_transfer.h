// Sending a GraphModule submodule a pass built (GraphAddSubgraphModule,
// GraphShareAttr: split_module's partitions) from an isolated pass's worker
// to the host (pass_call.h). The worker encodes the submodule as an IValue:
// its graph as fx-graph JSON text, the tensors it owns by value, and the
// modules it shares with the root module by their qualified names in the
// root; the host rebuilds it against its own root, sharing the same modules.
#ifndef PLUGIN_API_PIPELINE_SUBGRAPH_MODULE_TRANSFER_H_
#define PLUGIN_API_PIPELINE_SUBGRAPH_MODULE_TRANSFER_H_

#include <ATen/core/ivalue.h>

#include <memory>

namespace fx {
class GraphModule;
}  // namespace fx

namespace fx::host {

// `child`, a submodule of `root`, as an IValue. Throws FxError when a
// module it holds is neither in `root` outside `child` nor a GraphModule.
c10::IValue encode_subgraph_module(const GraphModule& root,
                                   const std::string& name,
                                   const GraphModule& child);

// The submodule encode_subgraph_module() described, built against `root`
// (not added to it). Throws FxError or c10::Error on what cannot be read.
std::shared_ptr<GraphModule> decode_subgraph_module(const GraphModule& root,
                                                    const c10::IValue& value);

}  // namespace fx::host

#endif  // PLUGIN_API_PIPELINE_SUBGRAPH_MODULE_TRANSFER_H_
