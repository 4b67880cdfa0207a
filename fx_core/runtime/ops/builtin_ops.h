// The built-in entries of fx::OpRegistry, one registration function per
// family. Internal to fx_core: users reach them through OpRegistry::global().
#ifndef FX_CORE_RUNTIME_OPS_BUILTIN_OPS_H_
#define FX_CORE_RUNTIME_OPS_BUILTIN_OPS_H_

#include "fx_core/runtime/op_registry.h"

namespace fx::ops {

// operator.*, builtins.getattr/len/int/float, math.*.
void register_python_ops(OpRegistry& registry);
// torch.* functions and the Tensor methods (call_method) that mirror them.
void register_torch_ops(OpRegistry& registry);
// torch.nn.functional.*, torch._C._nn.*.
void register_functional_ops(OpRegistry& registry);
// Python functions over one ATen operator (F.max_pool2d_with_indices,
// F.unfold, torch.functional.unique, ...).
void register_python_wrapper_ops(OpRegistry& registry);
// The functions torchvision wraps for torch.fx (stochastic_depth, Swin's).
void register_torchvision_ops(OpRegistry& registry);

}  // namespace fx::ops

#endif  // FX_CORE_RUNTIME_OPS_BUILTIN_OPS_H_
