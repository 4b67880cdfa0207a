// fx::sym::NodePairKey: an operation on two expressions, keyed by the
// identity of their nodes (the memos of symbolic capture: ExprMemo's
// arithmetic, GuardRecorder's decisions). Whoever keys by it keeps both
// expressions alive while the key is in use, so no identity is reused.
#ifndef FX_CORE_SYMBOLIC_NODE_PAIR_KEY_H_
#define FX_CORE_SYMBOLIC_NODE_PAIR_KEY_H_

#include <utility>

#include "fx_core/symbolic/sym_expr.h"

namespace fx::sym {

template <typename Op>
struct NodePairKey {
  Op op;
  const internal::Node* a;
  const internal::Node* b;

  NodePairKey(Op o, const Expr& x, const Expr& y)
      : op(o), a(&x.node()), b(&y.node()) {}

  friend bool operator==(const NodePairKey& x, const NodePairKey& y) {
    return x.op == y.op && x.a == y.a && x.b == y.b;
  }
  template <typename H>
  friend H AbslHashValue(H h, const NodePairKey& k) {
    return H::combine(std::move(h), static_cast<int>(k.op), k.a, k.b);
  }
};

}  // namespace fx::sym

#endif  // FX_CORE_SYMBOLIC_NODE_PAIR_KEY_H_
