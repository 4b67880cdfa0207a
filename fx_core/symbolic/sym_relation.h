// fx::sym::Relation: a comparison of two expressions, as ShapeEnv's guards
// hold them (sympy.Eq, Ne, Lt, Le, Gt, Ge).
//
// Contract:
//  - A Relation is what sympy would build from the same op and sides: when
//    sympy decides it on construction from the assumptions (symbols are
//    positive integers; Mod(a, b) >= 0 for b > 0), decided() gives the
//    value and str() prints it ("True" / "False"), as sympy's str() does.
//  - Otherwise str() is sympy's: `Eq(a, b)`, `Ne(a, b)`, `a < b`, `a <= b`,
//    `a > b`, `a >= b`, the sides as given (sympy does not reorder them).
//  - evaluate() is decided() when sympy decided it, else computes both sides
//    (FxError as Expr::evaluate).
#ifndef FX_CORE_SYMBOLIC_SYM_RELATION_H_
#define FX_CORE_SYMBOLIC_SYM_RELATION_H_

#include <optional>
#include <string>

#include "fx_core/symbolic/sym_expr.h"

namespace fx::sym {

struct Relation {
  enum class Op { kEq, kNe, kLt, kLe, kGt, kGe };
  Op op;
  Expr lhs;
  Expr rhs;

  // sympy's evaluation on construction: true/false, or nullopt when it
  // stays a relation.
  std::optional<bool> decided() const;
  std::string str() const;
  bool evaluate(const Bindings& bindings) const;
  // Both sides computed and compared, without asking decided() first: for
  // relations known not to be decided (a ShapeEnv's guards), per call.
  bool compare(const Bindings& bindings) const;

  friend bool operator==(const Relation& a, const Relation& b) {
    return a.op == b.op && a.lhs == b.lhs && a.rhs == b.rhs;
  }
  friend bool operator!=(const Relation& a, const Relation& b) {
    return !(a == b);
  }
};

}  // namespace fx::sym

#endif  // FX_CORE_SYMBOLIC_SYM_RELATION_H_
