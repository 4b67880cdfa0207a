// libfx_inference.so: the rewrites the InferencePlan compiles a CPU
// inference graph with, as passes a user can run and print
// (`fx run --pipeline fold_bn,fuse_conv --print-after ...`), under their
// names, descriptions and order (passes.h lists the files that hold them).
//
//  - fold_bn: a BatchNorm2d (running statistics) whose input is a Conv2d
//    used by nothing else becomes part of the convolution: one torch.conv2d
//    with new weight and bias attributes (w * g / sqrt(v + eps),
//    (b - m) * g / sqrt(v + eps) + beta), as torch.fx's
//    experimental.optimization.fuse does. For graphs of modules in eval
//    mode (inference): the batch statistics of training mode are not
//    folded.
//  - fuse_conv: a Conv2d (module or torch.conv2d / F.conv2d with attribute
//    weights) and the chain of single users after it (a residual `add` of a
//    tensor of the same shape, then one activation: relu, relu6/hardtanh,
//    hardswish, silu, sigmoid, hardsigmoid) become one fx_inference.conv2d
//    node (fx_core/runtime/ops/inference_ops.cc), which the host runs with
//    ATen's kernels and the InferencePlan binds to oneDNN with the tail as
//    post-ops.
//  - fuse_linear: a Linear (module or F.linear with attribute weights) and
//    the same tail (residual add, then one activation, gelu included)
//    become one fx_inference.linear node, which the InferencePlan binds to
//    oneDNN's matmul with the tail as post-ops.
//  - fuse_matmul: a matmul of two tensors (operator.matmul, torch.matmul,
//    torch.bmm, Tensor.matmul) and a multiplication of its only use by a
//    number (attention's q @ k^T * scale) become one fx_inference.matmul
//    node, which the InferencePlan runs on oneDNN's matmul reading strided
//    (permuted, transposed) operands in place.
//  - fuse_window_attention: torchvision's Swin shifted_window_attention
//    (one call in a traced model) becomes fx_inference.window_attention,
//    the same function, which the InferencePlan runs as one step: the
//    window partition as one gather, the qkv and proj linears with packed
//    weights, the attention core fused per window and head.
//  - fuse_pointwise (fuse_pointwise.h): what fuse_conv leaves of the
//    elementwise tails (chains and DAGs of float elementwise nodes, operands
//    broadcasting; an eval-mode BatchNorm2d fold_bn left, as x * scale +
//    shift) becomes one fx_inference.pointwise node each, which the
//    InferencePlan runs in one TensorIterator pass.
// All keep meta['tensor_meta'] (the replaced chain's last value's).
#include "fx/plugin_api.hpp"
#include "plugins/inference/fuse_pointwise.h"
#include "plugins/inference/passes.h"

FXP_PLUGIN(
    "fx_inference", "1.0",
    fxp::pass<fx_inference::fold_bn>(
        "fold_bn",
        "folds eval-mode BatchNorm2d into the Conv2d before "
        "it (torch.fx experimental.optimization.fuse)"),
    fxp::pass<fx_inference::fuse_conv>(
        "fuse_conv",
        "Conv2d + residual add + activation -> one fx_inference.conv2d "
        "(oneDNN post-ops in the InferencePlan)")
        .run_after({"shape_prop", "fold_bn"}),
    fxp::pass<fx_inference::fuse_linear>(
        "fuse_linear",
        "Linear + residual add + activation (gelu included) -> one "
        "fx_inference.linear (oneDNN matmul post-ops in the InferencePlan)")
        .run_after({"shape_prop"})
        .tolerance(1e-4, 1e-5)
        .idempotent(),
    fxp::pass<fx_inference::fuse_matmul>(
        "fuse_matmul",
        "matmul [* number] -> one fx_inference.matmul (oneDNN's matmul on "
        "strided operands, the scale as a post-op, in the InferencePlan)")
        .run_after({"shape_prop"})
        .tolerance(1e-4, 1e-5)
        .idempotent(),
    fxp::pass<fx_inference::fuse_window_attention>(
        "fuse_window_attention",
        "Swin's shifted_window_attention -> fx_inference.window_attention "
        "(one InferencePlan step: packed linears, fused attention core)")
        .idempotent(),
    fxp::pass<fx_inference::fuse_pointwise>(
        "fuse_pointwise",
        "chains of elementwise ops -> one fx_inference.pointwise (one "
        "TensorIterator pass in the InferencePlan)")
        .run_after({"shape_prop", "fuse_conv", "fuse_linear", "fuse_matmul"})
        .tolerance(1e-6, 1e-6)
        .idempotent())
