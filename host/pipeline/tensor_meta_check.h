// The contract of a pass that does not declare `invalidates: tensor_meta`:
// every node's meta['tensor_meta'] still describes the value it computes.
// Checked by running shape propagation again (meta tensors, no data:
// fx_core/runtime/meta_execution.h) and comparing each node's computed
// shape and dtype with its recorded tensor_meta. The pass manager checks it
// after such a pass when verify_each is on and tensor_meta held before it.
#ifndef HOST_PIPELINE_TENSOR_META_CHECK_H_
#define HOST_PIPELINE_TENSOR_META_CHECK_H_

#include "absl/status/status.h"

namespace fx {
class GraphModule;
}  // namespace fx

namespace fx::host {

// OK when every node with a tensor_meta computes a tensor of that shape and
// dtype from placeholders of their recorded tensor_meta; FailedPrecondition
// naming the first node that differs ("node 'relu' computes [2, 6]
// torch.float32 but its tensor_meta says [2, 3] torch.float32"). Nothing
// is checked (OK) when a placeholder has no tensor tensor_meta, and a graph
// that cannot run on meta tensors is not this contract's concern (OK).
absl::Status check_tensor_meta_current(GraphModule& module);

}  // namespace fx::host

#endif  // HOST_PIPELINE_TENSOR_META_CHECK_H_
