// The built-in entries of fx::OpRegistry, one registration function per
// family. Internal to fx_core: users reach them through OpRegistry::global().
#ifndef FX_CORE_RUNTIME_OPS_BUILTIN_OPS_H_
#define FX_CORE_RUNTIME_OPS_BUILTIN_OPS_H_

#include <memory>
#include <string>
#include <string_view>

#include "fx_core/runtime/op_registry.h"

namespace fx {
class AtenOp;
}  // namespace fx

namespace fx::ops {

// The ATen operator aten::NAME (every overload a graph can call), for
// kernels that forward to it by name. Found on first use, so registering
// the built-in ops builds no overload tables for operators a process never
// calls; copies share the lookup. Using it throws FxError when LibTorch has
// no such operator.
class AtenOperator {
 public:
  explicit AtenOperator(std::string name);
  const AtenOp& operator*() const;
  const AtenOp* operator->() const { return &**this; }

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// operator.*, builtins.getattr/len/int/float, math.*.
void register_python_ops(OpRegistry& registry);
// torch.* functions and the Tensor methods (call_method) that mirror them.
void register_torch_ops(OpRegistry& registry);
// torch.quantize_per_tensor, hand-written for speed (quantize_ops.cc);
// register_torch_ops calls it.
void register_quantize_per_tensor(OpRegistry& registry);
// torch.nn.functional.*, torch._C._nn.*.
void register_functional_ops(OpRegistry& registry);
// Python functions over one ATen operator (F.max_pool2d_with_indices,
// F.unfold, torch.functional.unique, ...).
void register_python_wrapper_ops(OpRegistry& registry);
// torch.masked's reductions and normalizations (torch.masked._ops.*).
void register_masked_ops(OpRegistry& registry);
// torch/functional.py, torch/_lowrank.py and Python-defined Tensor methods
// (cdist, norm, lu, meshgrid, stft, svd_lowrank, ...).
void register_torch_functional_ops(OpRegistry& registry);
// torch.nn.functional's channel dropouts, adaptive and fractional max pools,
// grid_sample, local_response_norm, embedding, embedding_bag.
void register_nn_functional_wrapper_ops(OpRegistry& registry);
// torch.nn.functional's losses.
void register_loss_ops(OpRegistry& registry);
// The functions torchvision wraps for torch.fx (stochastic_depth, Swin's).
void register_torchvision_ops(OpRegistry& registry);
// The fused ops of the inference passes (torch.ops.fx_inference.conv2d).
void register_inference_ops(OpRegistry& registry);

}  // namespace fx::ops

#endif  // FX_CORE_RUNTIME_OPS_BUILTIN_OPS_H_
