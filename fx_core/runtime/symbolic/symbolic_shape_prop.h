// Symbolic shape propagation: every node's sizes as expressions of the
// inputs' symbolic sizes (torch 1.13's FakeTensorProp under a ShapeEnv, as
// make_fx(tracing_mode="symbolic") computes meta['val']).
//
//   fx::SymbolicShapes s = fx::propagate_symbolic_shapes(
//       gm, {{at::empty({8, 3, 224, 224}, at::kMeta),
//             {B, Expr::integer(3), Expr::integer(224), Expr::integer(224)}}},
//       {{"B", 8}});
//   s.values.at(node).sizes  // [B, 1000]
//
// How. The graph first runs on meta tensors of the example inputs (the
// hints: every symbol's value in the examples), so every node has a value
// with dtype, sizes and strides (fx::run_and_report). Then, in graph order:
//  - placeholders take the declared sizes (their values at the hints must
//    be the examples' sizes);
//  - torch.ops.aten.sym_size / sym_numel / sym_stride and Tensor.size(),
//    .dim(), .numel() give expressions; operator.add, sub, mul, floordiv,
//    mod, neg, pos and the comparisons compute on them (a comparison that
//    sympy does not decide is decided at the hints and guarded), and
//    operator.getitem takes an element of a tuple or list;
//  - operator.getitem on a tensor (x[0], x[:, 1:n], x[..., None], x[idx])
//    is decomposed as Tensor.__getitem__ decomposes it (select, slice,
//    unsqueeze, index.Tensor: symbolic_indexing.h); an index that reads
//    tensor data (a bool mask) goes to the capture below;
//  - a call of an ATen operator (torch.ops.aten.*, torch.*, Tensor methods:
//    fx::AtenTarget's spellings) binds as Python would, then evaluates the
//    operator's shape function (shape_functions.h) on the arguments'
//    symbolic sizes (shape_graph_eval.h); the result, at the hints, must be
//    the kernel's sizes;
//  - any node whose inputs hold no symbol keeps its value at the hints;
//  - any other call (call_module, a Python-level function, a method that
//    is no ATen operator) is captured: the registered call capture
//    (symbolic_call_capture.h; fx_core/capture registers make_fx's)
//    runs it as fx::Interpreter would on inputs with the symbolic sizes
//    computed so far and gives its result's sizes; a failure throws FxError
//    naming the node and the capture's reason;
//  - with no capture registered, such a node throws FxError naming it and
//    its target ("no symbolic shape rule").
// Strides: a placeholder's as declared; a view's (a result that aliases a
// tensor argument) each the argument's stride of the same value at the
// hints where there is one; otherwise symbolic when the tensor is dense in
// some dimension order (contiguous, transposed, permuted, channels_last:
// each stride the product of the sizes inside it) with expanded dimensions
// at 0. When none of these applies and the sizes hold symbols, they are
// left empty (unknown). torch 1.13 gives an input's strides symbols of
// their own (`t0.stride(0)`) and carries them through views as we do; for
// new tensors both compute contiguous strides from the sizes.
//
// Guards: every decision a shape function or an operator node takes on a
// symbol, as the relation that held at the hints. Nothing in `gm` changes.
#ifndef FX_CORE_RUNTIME_SYMBOLIC_SYMBOLIC_SHAPE_PROP_H_
#define FX_CORE_RUNTIME_SYMBOLIC_SYMBOLIC_SHAPE_PROP_H_

#include <ATen/core/ivalue.h>

#include <unordered_map>
#include <vector>

#include "fx_core/symbolic/sym_expr.h"
#include "fx_core/symbolic/sym_relation.h"

namespace fx {

class GraphModule;
class Node;

// A node's value, symbolically.
struct SymbolicValue {
  enum class Kind { kTensor, kInt, kSequence, kOther };
  Kind kind = Kind::kOther;
  std::vector<sym::Expr> sizes;      // kTensor
  std::vector<sym::Expr> strides;    // kTensor; empty: unknown
  sym::Expr integer;                 // kInt
  std::vector<SymbolicValue> items;  // kSequence
  // The value at the hints (tensors are meta tensors): dtype, device and
  // every non-symbolic value.
  c10::IValue hint;

  bool has_symbols() const;
};

// One example input: its value at the hints, and for a tensor its symbolic
// sizes (empty: the example's sizes, concrete).
struct SymbolicInput {
  c10::IValue example;
  std::vector<sym::Expr> sizes;
  // Its symbolic strides (torch 1.13 declares them too); empty: derived
  // from the sizes and the example's layout.
  std::vector<sym::Expr> strides;
};

// A value with nothing symbolic in it (sizes, strides and ints as at the
// hints).
SymbolicValue concrete_symbolic_value(const c10::IValue& v);

struct SymbolicShapes {
  std::unordered_map<const Node*, SymbolicValue> values;
  sym::Bindings hints;
  std::vector<sym::Relation> guards;  // in the order they were taken
};

// Propagates `inputs` (one per placeholder) through `gm`'s graph; `hints`
// binds every symbol the inputs' sizes name. Throws FxError (see above).
SymbolicShapes propagate_symbolic_shapes(
    GraphModule& gm, const std::vector<SymbolicInput>& inputs,
    const sym::Bindings& hints);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_SYMBOLIC_SYMBOLIC_SHAPE_PROP_H_
