// fuse_pointwise (libfx_inference.so): groups of float elementwise nodes
// become one fx_inference.pointwise node
// (fx_core/runtime/ops/pointwise_program.h for its program), which the host
// runs op by op with ATen's kernels and the InferencePlan in one TensorIterator
// pass.
//
// Elementwise nodes: add / sub / mul / true div of tensors and Python numbers
// (operator.*, torch.*, Tensor methods; no alpha, no rounding_mode); neg,
// relu, sigmoid, tanh, silu, hardswish, hardsigmoid, gelu (erf form),
// hardtanh / relu6 / clamp with number bounds, as functions, methods or
// torch.nn modules; an eval-mode BatchNorm2d that fold_bn left (no
// convolution before it: densenet's pre-activations) as x * scale + shift,
// two new per-channel attributes (batch_norm.h). A group grows from a node (the
// root) backwards through operands that are elementwise nodes of the root's
// shape and dtype (by meta['tensor_meta'], a float dtype) whose users are all
// in the group: the values inside the group are dead outside it, operands of
// other shapes broadcast (the squeeze-excitation scale x * sigmoid(s)), and
// nothing is computed more often than before. An in-place form (inplace=True)
// joins only when its input has no other user. A group of one is left alone
// when it is an op the InferencePlan already binds directly (arithmetic, relu,
// sigmoid, tanh, neg, clamp as a call), fused otherwise. The fused node
// takes the root's place and its meta['tensor_meta'].
#ifndef PLUGINS_INFERENCE_FUSE_POINTWISE_H_
#define PLUGINS_INFERENCE_FUSE_POINTWISE_H_

#include "fx/plugin_api.hpp"

namespace fx_inference {

bool fuse_pointwise(fxp::Graph& g, const fxp::Options& options);

}  // namespace fx_inference

#endif  // PLUGINS_INFERENCE_FUSE_POINTWISE_H_
