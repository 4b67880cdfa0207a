// Sending a GraphModule submodule a pass built (GraphAddSubgraphModule,
// GraphShareAttr: split_module's partitions) from an isolated pass's worker
// to the host (pass_call.h). The worker encodes the submodule as an IValue:
// its graph as fx-graph JSON text, the tensors it owns by value, and the
// modules, parameters and buffers it shares with the root module as (name
// in the child, name in the root) pairs (the names may differ:
// split_module's layer1_0_conv1 is the root's layer1.0.conv1); the host
// rebuilds it against its own root, sharing the same objects, each of its
// modules holding its parameters, buffers and children in the worker's
// order.
#ifndef HOST_PIPELINE_SUBGRAPH_MODULE_TRANSFER_H_
#define HOST_PIPELINE_SUBGRAPH_MODULE_TRANSFER_H_

#include <ATen/core/ivalue.h>

#include <cstddef>
#include <memory>
#include <string>

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace fx {
class GraphModule;
}  // namespace fx

namespace fx::host {

// The number of fields of the tuple encode_subgraph_module() makes.
inline constexpr size_t kSubgraphModuleFields = 8;

// `child`, a submodule of `root` (the root module, or its registries as
// they were at some point of the pass), as an IValue. Throws FxError when
// a module it holds is neither in `root` outside `child` nor a GraphModule.
c10::IValue encode_subgraph_module(const torch::nn::Module& root,
                                   const std::string& name,
                                   const GraphModule& child);

// The submodule encode_subgraph_module() described, built against `root`
// (not added to it). Throws FxError or c10::Error on what cannot be read.
std::shared_ptr<GraphModule> decode_subgraph_module(const GraphModule& root,
                                                    const c10::IValue& value);

}  // namespace fx::host

#endif  // HOST_PIPELINE_SUBGRAPH_MODULE_TRANSFER_H_
