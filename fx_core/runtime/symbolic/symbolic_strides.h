// The symbolic strides of a tensor whose symbolic sizes are known and whose
// value at the hints (a meta tensor) gives the layout. Shared by symbolic
// shape propagation and symbolic capture, which must agree.
//
//  - dense_strides: when the tensor is dense in some order of its
//    dimensions (contiguous, transposed, permuted, channels_last), each
//    stride the product of the sizes inside it, expanded dimensions 0;
//    empty when it is not dense.
//  - view_strides: per dimension, the stride of a base (a tensor it views)
//    with the same value at the hints (torch carries a view's strides from
//    its base), else the dense one; a dimension with neither takes the
//    hint's integer when `hint_fallback`, else the result is empty
//    (unknown). Sizes without symbols and no base: the hint's strides.
#ifndef FX_CORE_RUNTIME_SYMBOLIC_SYMBOLIC_STRIDES_H_
#define FX_CORE_RUNTIME_SYMBOLIC_SYMBOLIC_STRIDES_H_

#include <ATen/core/Tensor.h>

#include <vector>

#include "fx_core/symbolic/guard_recorder.h"
#include "fx_core/symbolic/sym_expr.h"

namespace fx {

std::vector<sym::Expr> dense_strides(const std::vector<sym::Expr>& sizes,
                                     const at::Tensor& hint);

std::vector<sym::Expr> view_strides(
    const std::vector<sym::Expr>& sizes, const at::Tensor& hint,
    const std::vector<const std::vector<sym::Expr>*>& base_strides,
    const sym::GuardRecorder& guards, bool hint_fallback);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_SYMBOLIC_SYMBOLIC_STRIDES_H_
