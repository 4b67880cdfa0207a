// Tensor indexing on symbolic sizes: the sizes (and a view's strides) of
// `x[index]` (torch.fx's operator.getitem on a tensor) as expressions of
// x's and of the symbolic ints the index holds, decomposed as torch 1.13's
// Tensor.__getitem__ decomposes it (ATen/TensorIndexing.h's applySlicing),
// so that nothing is asked for at the hints:
//  - from the first dimension on, an int is aten::select.int, a slice
//    aten::slice.Tensor, None aten::unsqueeze, Ellipsis skips the
//    dimensions no other index takes, a bool is unsqueeze plus an index of
//    one element (True) or none (False), and an integer tensor or a list of
//    ints is an index of its sizes;
//  - indices, if any, then go to aten::index.Tensor, as torch's meta rule
//    shapes it: their broadcast sizes in place of the indexed dimensions
//    when those are adjacent, else in front of the other dimensions;
//  - no index at all (`x[...]`) is aten::alias: x's sizes.
// select, unsqueeze and the broadcast take their sizes from the operators'
// shape functions (shape_functions.h); slice clamps its bounds as ATen's
// slice rule does (torch's slice decomposition, which make_fx 1.13 runs on
// symbolic sizes). Every decision on a symbol (a bound against a size, an
// index in range) is a guard on `guards`.
// A tuple is an index per dimension; a list holding a slice, None,
// Ellipsis, a tensor or a sequence (fewer than 32 items) is read as a tuple,
// as Python reads it; any other index is one index.
#ifndef FX_CORE_RUNTIME_SYMBOLIC_SYMBOLIC_INDEXING_H_
#define FX_CORE_RUNTIME_SYMBOLIC_SYMBOLIC_INDEXING_H_

#include <functional>
#include <optional>
#include <vector>

#include "fx_core/ir/argument.h"
#include "fx_core/runtime/symbolic/symbolic_shape_prop.h"
#include "fx_core/symbolic/guard_recorder.h"
#include "fx_core/symbolic/sym_expr.h"

namespace fx {

// The symbolic value of a node the index refers to.
using SymbolicValueOf = std::function<const SymbolicValue&(const Node&)>;

// self[index]'s sizes, and its strides when it is a view of self (select,
// slice, unsqueeze, alias: ATen's view strides from `strides`, self's).
struct SymbolicIndexing {
  std::vector<sym::Expr> sizes;
  // Empty for index.Tensor's result (a new tensor) or when self's strides
  // are not known (`strides` empty).
  std::vector<sym::Expr> strides;
};

// self[index], `sizes` and `strides` being self's. std::nullopt when the
// result depends on tensor data or on values this does not model: a bool or
// uint8 mask, a 0-dim tensor read as an int, a tensor as a slice bound, a
// list of bools, a node holding a sequence (the caller falls back to
// capturing the call, which says why it cannot). Throws FxError when Python
// would refuse the index (too many indices, a slice step that is not
// positive, an index out of range, a float) or a shape function's check
// fails.
std::optional<SymbolicIndexing> symbolic_getitem(
    const std::vector<sym::Expr>& sizes, const std::vector<sym::Expr>& strides,
    const Argument& index, const SymbolicValueOf& value_of,
    sym::GuardRecorder& guards);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_SYMBOLIC_SYMBOLIC_INDEXING_H_
