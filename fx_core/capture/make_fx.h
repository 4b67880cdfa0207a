// fx::make_fx: records the ATen operators that plain LibTorch C++ code calls
// (no fx::Value) into a GraphModule, as Python's
// torch.fx.experimental.proxy_tensor.make_fx (1.13, tracing_mode="real")
// records them for the same code written in Python.
//
//   auto gm = fx::make_fx(
//       [&](const std::vector<at::Tensor>& in) -> std::vector<at::Tensor> {
//         return {model->forward(in[0]).relu()};
//       },
//       {at::randn({1, 3, 8, 8})});
//   std::cout << gm->graph().str() << gm->code();
//
// What is recorded (make_fx's conventions):
//   - one placeholder per example input, named arg0_1, arg1_1, ...;
//   - every ATen operator call that reaches the dispatcher below autograd,
//     as call_function `torch.ops.aten.NAME.OVERLOAD` (`.default` for the
//     unnamed overload), the node named NAME; arguments as Python's
//     dispatcher hands them to __torch_dispatch__ (trailing defaulted
//     positional arguments and defaulted keyword-only arguments left out);
//   - an operator with a CompositeImplicitAutograd kernel is not recorded
//     but run through that kernel, whose calls are recorded (linear -> t +
//     addmm, flatten -> _reshape_alias, batch_norm -> native_batch_norm);
//   - an operator returning a tuple or a list gets one operator.getitem node
//     per element, made right after it;
//   - an in-place operator's node becomes its first argument's node;
//   - with grad enabled, a `detach` node wherever autograd saves an output
//     for backward (after relu, ...), as make_fx records them;
//   - a tensor the graph did not produce (a parameter, a buffer, a tensor
//     made outside the function) becomes a get_attr at its first use:
//     parameters `_param_constantN`, other tensors `_tensor_constantN`, one
//     attribute per tensor, one get_attr node per use;
//   - the output: a list of the returned tensors' nodes (`return [a, b]`, as
//     for a Python function returning a list);
//   - calls the captured code makes itself are spelled as Python's
//     bindings call ATen: a number reaching a C++-only `.Scalar` overload
//     (`x + 2`) is recorded as the `.Tensor` overload with the number; a
//     factory gets the device / pin_memory (and for *_like dtype / layout)
//     Python passes; `2 - x`, `2 / x`, `2 % x`, torch::tensor and the
//     torch:: factories are recorded as Python's calls (front_end.h). Calls
//     made inside ATen keep their own spelling, as in make_fx. What cannot
//     be normalised is listed in README.md.
//
// The function runs eagerly on the example inputs (real tensors, unless
// MakeFxOptions::meta), so the numbers are eager's. Capture is per thread: only
// calls made on the calling thread while make_fx runs are recorded (intra-op
// worker threads never are); a second make_fx on the same thread during a
// capture throws.
//
// Mechanism and limits: the capture is a torch_dispatch mode installed on
// the Python dispatch key through c10::impl::TorchDispatchModeTLS with a
// c10::impl::PyInterpreterVTable of our own (no Python interpreter), the same
// place in the dispatcher where Python's make_fx sits; it therefore cannot
// run in a process whose Python interpreter has a dispatch mode active, and
// relies on LibTorch 1.13's c10::impl internals. Which calls the captured
// code made itself is seen by a boxed fallback on TESTING_ONLY_GenericMode
// (above autograd), registered by this library: no other library in the
// process may register one.
#ifndef FX_CORE_CAPTURE_MAKE_FX_H_
#define FX_CORE_CAPTURE_MAKE_FX_H_

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fx_core/ir/graph.h"
#include "fx_core/symbolic/sym_expr.h"

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace fx {

class GraphModule;
namespace sym {
class ShapeEnv;
}  // namespace sym

// The code to capture: example inputs in, tensors out.
using TensorFunction =
    std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>;

// A decomposition: an operator's arguments (all of them, in schema order,
// defaults filled in) in, its results out, computed with ATen calls that
// are recorded in the operator's place.
using Decomposition =
    std::function<std::vector<c10::IValue>(const std::vector<c10::IValue>&)>;

// A tensor's symbolic sizes and strides: one expression per dimension each.
struct SymbolicSizes {
  std::vector<sym::Expr> sizes;
  std::vector<sym::Expr> strides;  // empty: dense, else the example's
};

struct MakeFxOptions {
  // The GraphModule's class name (Python: the function's __name__).
  std::string class_name = "GraphModule";
  // Meta mode: shapes only, no data. `fn` gets meta copies of the example
  // inputs, and every recorded operator runs on meta tensors (a parameter
  // or other real tensor it is given is replaced by a meta tensor of the
  // same shape), so nothing is computed; the GraphModule keeps the real
  // parameters and runs on real inputs. Operators LibTorch's C++ build has
  // no meta kernel for get shape rules (meta_rules.h: convolution, batch,
  // layer and group norm, embedding, index_select, where, adaptive pooling,
  // relu, hardtanh, hardswish, native_dropout); any other such operator
  // throws. The graph is
  // make_fx's on meta tensors (device=meta in factory arguments).
  bool meta = false;
  // make_fx's tracing_mode: "real", "fake" (what `meta` does; `meta` true
  // with "real" is "fake") or "symbolic". Symbolic mode runs as fake mode
  // on tensors whose sizes are symbols (the example inputs' sizes, named as
  // torch 1.13 names them, `t0.size(0)`; 0 and 1 specialised; equal sizes
  // one symbol) and records where torch 1.13's make_fx does:
  // `torch.ops.aten.sym_size(x, d)` at the first use of a size as an
  // argument, and the SymInt arithmetic (operator.mul, floordiv, ...) made
  // on sizes (`x.sym_size(0) * 2`, `x.view_symint(...)` in C++). Every
  // operator's result sizes come from its TorchScript shape function
  // (runtime/symbolic/shape_functions.h); one with symbolic arguments and
  // no such function throws FxError. C++ asking for concrete sizes
  // (`x.size(0)`, sizes(), a branch on a SymInt) gets the example's value
  // and a guard. The GraphModule's placeholders carry symbolic tensor_meta
  // and its shape environment (hints, guards) is set: it runs on other
  // shapes and refuses inputs that break a guard. Mechanism:
  // symbolic_capture.h. Not supported in symbolic mode: torch::tensor
  // constants built inside the captured function.
  std::string tracing_mode = "real";
  // Symbolic mode from declared sizes: when not empty (one per example
  // input), the inputs' sizes and strides are these expressions instead of
  // fresh symbols, `symbol_hints` giving every symbol they name its value
  // (each example's sizes must be its declared ones at these values). The
  // capture's sizes are then expressions of the caller's symbols: see
  // CapturedGraph::output_sizes. (Symbolic shape propagation captures a
  // node's call this way, node_capture.h.)
  std::vector<SymbolicSizes> declared_sizes;
  sym::Bindings symbol_hints;
  // A call that reads a captured tensor's value into C++ (item() reaches
  // aten::_local_scalar_dense; aten::equal) makes whatever the code does
  // with it a constant of the graph. By default that throws fx::FxError
  // naming the operator; true records it, as make_fx 1.13 does in real mode
  // (the value, and any branch taken on it, baked in). A tensor the graph
  // holds as a constant may always be read.
  bool allow_data_dependent = false;
  // When set, exactly this module's parameters are recorded as
  // `_param_constantN` (Python: instances of torch.nn.Parameter). When not,
  // a leaf tensor that requires grad is taken for a parameter.
  const torch::nn::Module* module = nullptr;
  // Operators are named as c10 prints them: "aten::relu" (the unnamed
  // overload), "aten::add.Tensor". An unknown name throws fx::FxError.
  //
  // make_fx's decomposition_table: applied where make_fx applies it, to the
  // calls that reach the dispatcher below autograd (under grad a composite
  // operator such as linear is already decomposed by then). A
  // decomposition's own calls are spelled as the captured code's are (in
  // make_fx it is Python code) and decomposed further by the table; one
  // returning no values declines (the operator is recorded whole). Built-in
  // ones: decompositions.h.
  std::map<std::string, Decomposition> decompositions;
  // Operators recorded whole wherever they are called, composite ones
  // included (a vendor's fused kernel stays one node): seen above autograd,
  // and nothing they call is recorded, autograd's detach calls included.
  std::vector<std::string> leaf_ops;
  // Also apply the decompositions and leaf operators plugins registered
  // (capture_extensions.h); those above take precedence for the same
  // operator.
  bool registered_extensions = true;
};

// What a capture records, before it becomes a GraphModule: the graph and
// the tensors its get_attr nodes name, in order of first use.
struct CapturedGraph {
  struct Constant {
    std::string name;  // "_param_constant0", "_tensor_constant0"
    at::Tensor tensor;
    bool is_parameter = false;
  };
  std::unique_ptr<Graph> graph;
  std::vector<Constant> constants;
  // Symbolic mode: the capture's hints and guards (GraphModule's
  // set_shape_env); nullptr otherwise.
  std::shared_ptr<const sym::ShapeEnv> shape_env;
  // Symbolic mode: each returned tensor's symbolic sizes and strides, in
  // order (empty for an undefined one).
  std::vector<SymbolicSizes> output_sizes;
};

// make_fx without building the GraphModule (no code generation, no plan):
// for passes and exports that only need the graph. Same contract otherwise.
CapturedGraph capture_graph(const TensorFunction& fn,
                            const std::vector<at::Tensor>& example_inputs,
                            const MakeFxOptions& options = {});

// Runs `fn` on `example_inputs` and returns what it called as a GraphModule
// whose attributes hold the parameters and constants the graph uses (shared
// with the originals, not copied). Throws fx::FxError when the function
// returns a value the graph cannot express, or when a capture is already
// running on this thread; exceptions from `fn` propagate, the thread's
// dispatch state restored.
std::shared_ptr<GraphModule> make_fx(
    const TensorFunction& fn, const std::vector<at::Tensor>& example_inputs,
    const MakeFxOptions& options = {});

}  // namespace fx

#endif  // FX_CORE_CAPTURE_MAKE_FX_H_
