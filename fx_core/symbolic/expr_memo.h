// fx::sym::ExprMemo: the results of arithmetic on expressions, kept by the
// identity of the operands (LibTorch's size arithmetic, computeStride and
// infer_size, repeats the same operations on the same sizes at every call
// of a traced loop; each would expand the same polynomials again).
//
// Contract:
//  - apply(op, a, b) is exactly a + b, a - b, a * b, floordiv(a, b) or
//    mod(a, b) (the same value, the same exceptions), computed once per
//    pair of operand nodes; later calls on the same nodes return the same
//    result node.
//  - The memo keeps the operands it was asked about alive, so an identity
//    is never reused for another expression while it lives. Its size grows
//    with the distinct operations asked for: one per traced capture.
//  - No LibTorch.
#ifndef FX_CORE_SYMBOLIC_EXPR_MEMO_H_
#define FX_CORE_SYMBOLIC_EXPR_MEMO_H_

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "fx_core/symbolic/node_pair_key.h"
#include "fx_core/symbolic/sym_expr.h"

namespace fx::sym {

class ExprMemo {
 public:
  enum class Op : uint8_t { kAdd, kSub, kMul, kFloorDiv, kMod };

  Expr apply(Op op, const Expr& a, const Expr& b);

 private:
  using Key = NodePairKey<Op>;
  struct Entry {
    Expr a, b, result;
  };
  absl::flat_hash_map<Key, Entry> entries_;
};

}  // namespace fx::sym

#endif  // FX_CORE_SYMBOLIC_EXPR_MEMO_H_
