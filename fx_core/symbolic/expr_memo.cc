#include "fx_core/symbolic/expr_memo.h"

#include <utility>

namespace fx::sym {
namespace {

Expr compute(ExprMemo::Op op, const Expr& a, const Expr& b) {
  switch (op) {
    case ExprMemo::Op::kAdd:
      return a + b;
    case ExprMemo::Op::kSub:
      return a - b;
    case ExprMemo::Op::kMul:
      return a * b;
    case ExprMemo::Op::kFloorDiv:
      return floordiv(a, b);
    case ExprMemo::Op::kMod:
      break;
  }
  return mod(a, b);
}

}  // namespace

Expr ExprMemo::apply(Op op, const Expr& a, const Expr& b) {
  Key key(op, a, b);
  auto found = entries_.find(key);
  if (found != entries_.end()) return found->second.result;
  Expr result = compute(op, a, b);  // may throw: nothing is kept then
  entries_.emplace(key, Entry{a, b, result});
  return result;
}

}  // namespace fx::sym
