// The shape function of an ATen operator: a TorchScript graph from its
// inputs' sizes (and its other arguments) to its outputs' sizes, the form
// LibTorch keeps them in (torch/csrc/jit/runtime/symbolic_shape_registry.h).
//
// Where they come from, in order:
//  1. LibTorch's own registry (about 230 schemas: convolutions, matmul and
//     linear, broadcasting arithmetic, views, reductions, pooling, norms).
//  2. An operator whose shape rule is one LibTorch already has for another
//     schema with the same leading arguments takes that one (a donor):
//     `_softmax` is `relu`'s (the shape of self), `_unsafe_view` and
//     `reshape` are `view`'s, `maximum` is `add.Tensor`'s (broadcast).
//     LibTorch 1.13 has no `pointwise` tag to derive this from, so the
//     donors are listed (shape_functions.cc).
//  3. Functions of our own in TorchScript, for rules LibTorch lacks
//     (`_reshape_alias`, factories, `split`, `stack`, `native_dropout`,
//     ...), compiled once per process.
// An operator with none has no symbolic shape (the caller says so).
//
// Threads: safe; graphs are built once and shared, never mutated.
#ifndef FX_CORE_RUNTIME_SYMBOLIC_SHAPE_FUNCTIONS_H_
#define FX_CORE_RUNTIME_SYMBOLIC_SHAPE_FUNCTIONS_H_

#include <memory>

namespace c10 {
struct FunctionSchema;
}  // namespace c10

namespace torch::jit {
struct Graph;
}  // namespace torch::jit

namespace fx {

// The shape graph of `schema` (an operator's schema as LibTorch's operator
// registry holds it), or nullptr.
std::shared_ptr<const torch::jit::Graph> shape_graph_for(
    const c10::FunctionSchema& schema);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_SYMBOLIC_SHAPE_FUNCTIONS_H_
