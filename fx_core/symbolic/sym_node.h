// Internal to fx_core/symbolic: the canonical node behind fx::sym::Expr, its
// polynomial arithmetic, checked int64 arithmetic and sympy's sort keys.
// Not API: only this layer's sources include it.
#ifndef FX_CORE_SYMBOLIC_SYM_NODE_H_
#define FX_CORE_SYMBOLIC_SYM_NODE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fx_core/support/error.h"
#include "fx_core/symbolic/sym_expr.h"

namespace fx::sym::internal {

// sympy's sort_key, a nested tuple of ints and strings compared as Python
// compares them.
struct Key;
using KeyPtr = std::shared_ptr<const Key>;
struct Key {
  enum class Tag { kInt, kStr, kTuple } tag;
  int64_t i = 0;
  std::string s;
  std::vector<KeyPtr> items;
};
int compare(const Key& a, const Key& b);  // <0, 0, >0

// One factor of a term: an atom (symbol, FloorDiv, Mod) to a power >= 1.
struct Factor {
  Expr atom;
  int64_t power;
};
// coeff * factors..., factors in sympy's sort_key order of their atoms.
struct Term {
  int64_t coeff;
  std::vector<Factor> factors;
};
// A sum of terms with distinct monomials and non-zero coefficients, in
// monomial order (compare_monomials).
using Poly = std::vector<Term>;

// Immutable once made (sort_key() fills its cache once, thread-safely).
struct Node {
  Expr::Kind kind;
  bool atom;                   // kSymbol, kFloorDiv, kMod
  std::string name;            // kSymbol
  std::vector<Expr> operands;  // kFloorDiv, kMod: {base, divisor}
  Poly poly;                   // everything but atoms
  size_t hash = 0;             // of the structure, set when made
  // The Mod atoms in the expression tree, a shared one counted each time
  // it occurs (sympy's count(Mod)), set when made; at most SIZE_MAX.
  size_t mod_count = 0;
  // Its parts, counted the same way: 1 for a symbol, 1 + the operands' for
  // FloorDiv and Mod, each term's 1 + its atoms' for a sum; set when made,
  // at most kMaxSize.
  size_t size = 1;

  // sympy's sort_key of the whole expression, computed on first use: most
  // expressions (sizes, strides) are never ordered against another.
  mutable std::once_flag key_once;
  mutable KeyPtr key;
};
const Key& sort_key(const Node& node);

// What checked arithmetic throws when a result leaves int64 (sympy's
// integers have no bound; here such an expression is refused).
struct IntegerOverflow : FxError {
  using FxError::FxError;
};

// Checked arithmetic on int64 without INT64_MIN; IntegerOverflow on overflow.
int64_t checked_add(int64_t a, int64_t b);
int64_t checked_mul(int64_t a, int64_t b);
int64_t checked_neg(int64_t a);
// Python's // and % (FxError on a zero divisor).
int64_t python_floordiv(int64_t a, int64_t b);
int64_t python_mod(int64_t a, int64_t b);

// Atoms and their conversion to and from polynomials.
Expr make_symbol(std::string_view name);
Expr make_atom(Expr::Kind kind, const Expr& base, const Expr& divisor);
Poly to_poly(const Expr& e);
// e's terms without copying a sum's: its node's own, or for an atom its
// one term, made in *scratch.
const Poly& terms_of(const Expr& e, Poly* scratch);
Expr from_poly(Poly poly);
Expr from_term(const Term& term);

// Polynomial arithmetic, each result canonical.
Poly poly_add(const Poly& a, const Poly& b);
// The terms summed: sorted by monomial, equal monomials merged, zero terms
// dropped.
Poly poly_sum(Poly terms);
Poly poly_mul(const Poly& a, const Poly& b);
Poly poly_scale(const Poly& a, int64_t factor);
// a == -b, read off the terms without building -b.
bool is_negation(const Expr& a, const Expr& b);
// The sum of terms scaled, ca * a + cb * b, formed once.
Expr linear_combination(int64_t ca, const Expr& a, int64_t cb, const Expr& b);

// Sort keys and orders.
int compare_exprs(const Expr& a, const Expr& b);  // by sort key
int compare_monomials(const Term& a, const Term& b);
KeyPtr poly_key(const Poly& poly);
KeyPtr atom_key(const Node& atom);
// The terms in sympy's printing order (Expr.as_ordered_terms).
std::vector<const Term*> ordered_terms(const Poly& poly);

// torch's FloorDiv.eval and sympy's Mod.eval (sym_division.cc).
Expr eval_floordiv(const Expr& base, const Expr& divisor, int depth);
Expr eval_mod(const Expr& p, const Expr& q, int depth);

// What sympy's assumptions know (sym_division.cc): is_odd and is_positive
// are True; (d > 0), (d >= 0), (d == 0) as true / false / unknown.
bool known_odd(const Expr& e);
bool known_positive(const Expr& e);
std::optional<bool> is_positive(const Expr& d);
std::optional<bool> is_nonnegative(const Expr& d);
std::optional<bool> is_zero(const Expr& d);

// The recursion bound of the simplification rules.
inline constexpr int kMaxEvalDepth = 64;

}  // namespace fx::sym::internal

#endif  // FX_CORE_SYMBOLIC_SYM_NODE_H_
