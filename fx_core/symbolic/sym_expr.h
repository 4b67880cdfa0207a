// fx::sym::Expr: symbolic integer expressions, the values of symbolic shapes
// (torch 1.13's ShapeEnv keeps them as sympy expressions).
//
// Contract:
//  - An Expr is an immutable value; copies share one node and cost a
//    reference count.
//  - It is always in one canonical expanded form, the form torch 1.13 keeps
//    after every operation (each result goes through sympy.expand): a sum of
//    terms, each an integer coefficient times a product of atoms raised to
//    positive powers. The atoms are symbols (positive integers, as ShapeEnv
//    creates them, named like `t0.size(0)`), FloorDiv(a, b) and Mod(a, b).
//    So `==` is structural equality and agrees with sympy's `==`.
//  - floordiv() applies torch 1.13's FloorDiv.eval rules and mod() sympy
//    1.11's Mod.eval rules (symbolic_shapes.py, sympy/core/mod.py); see
//    sym_division.cc for the rules and the few cases not matched.
//  - str() is byte-identical to sympy's str() of the same expression: its
//    term and factor order, `**`, `FloorDiv(a, b)`, `Mod(a, b)` and the
//    parentheses sympy puts around a Mod in a product or a power.
//  - Integers are int64 without INT64_MIN (so every printed integer, negated
//    or not, reads back); a result outside that range throws FxError, as do
//    division and modulo by zero. Nothing is undefined behaviour.
//  - An expression of more than kMaxTerms terms throws FxError (hostile
//    powers such as (a + b + c)**40 stop there), and so does one of more
//    than kMaxSize parts (terms and atoms, a part that occurs more than once
//    counted each time, as str() prints it: nested divisions of large sums,
//    each sharing the one before, would otherwise print gigabytes).
#ifndef FX_CORE_SYMBOLIC_SYM_EXPR_H_
#define FX_CORE_SYMBOLIC_SYM_EXPR_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fx::sym {

class Expr;
namespace internal {
struct Node;
}  // namespace internal

// Values of symbols, by name, for Expr::evaluate.
using Bindings = std::map<std::string, int64_t, std::less<>>;
// Replacements of symbols, by name, for Expr::substitute.
using Substitution = std::map<std::string, Expr, std::less<>>;

// The most terms one expression may have.
inline constexpr size_t kMaxTerms = 10000;
// The most parts one expression may have, counted as its text repeats them.
inline constexpr size_t kMaxSize = 1000000;

class Expr {
 public:
  // sympy's class of the expression. A product of one atom with coefficient
  // 1 is kPow (x**2); any other product is kMul (2*x, x*y, -x).
  enum class Kind { kInteger, kSymbol, kAdd, kMul, kPow, kFloorDiv, kMod };

  // The integer 0.
  Expr();

  // Throws FxError for INT64_MIN.
  static Expr integer(int64_t value);
  // A positive integer symbol. Throws FxError for an empty name.
  static Expr symbol(std::string_view name);

  Kind kind() const;
  // The value of an integer, nullopt for anything else.
  std::optional<int64_t> as_integer() const;
  // A symbol's name; throws FxError for any other kind.
  const std::string& name() const;
  // The operands, as sympy's args: FloorDiv/Mod (base, divisor); Pow (base,
  // exponent); Mul the coefficient (when not 1) then the factors, Add the
  // terms, both in printing order; none for integers and symbols.
  std::vector<Expr> args() const;

  // The names of the symbols it contains, sorted, without duplicates.
  std::vector<std::string> free_symbols() const;
  // Every symbol named in `replacements` replaced, re-simplified.
  Expr substitute(const Substitution& replacements) const;
  // The value with every symbol bound. Throws FxError naming an unbound
  // symbol, on division or modulo by zero and on overflow. As sympy,
  // FloorDiv(0, 0) is 0 (FloorDiv.eval tests the base first).
  int64_t evaluate(const Bindings& bindings) const;

  // As sympy's str().
  std::string str() const;

  // A hash of the structure: equal expressions hash alike.
  size_t hash() const;

  friend bool operator==(const Expr& a, const Expr& b);
  friend bool operator!=(const Expr& a, const Expr& b) { return !(a == b); }

  // Internal: the canonical node (sym_node.h).
  const internal::Node& node() const { return *node_; }
  explicit Expr(std::shared_ptr<const internal::Node> node);

 private:
  std::shared_ptr<const internal::Node> node_;
};

Expr operator+(const Expr& a, const Expr& b);
Expr operator-(const Expr& a, const Expr& b);
Expr operator*(const Expr& a, const Expr& b);
Expr operator-(const Expr& a);
// terms[0] + terms[1] + ..., formed once (adding them one at a time re-sorts
// the sum at each step: a sum of n terms read from text cost n**2).
Expr sum(const std::vector<Expr>& terms);
// base**exponent, expanded; exponent >= 0 (FxError otherwise).
Expr pow(const Expr& base, int64_t exponent);
// torch 1.13's FloorDiv(base, divisor): Python's // on integers.
Expr floordiv(const Expr& base, const Expr& divisor);
// sympy's Mod(p, q): Python's % on integers (the sign of the divisor).
Expr mod(const Expr& p, const Expr& q);

}  // namespace fx::sym

#endif  // FX_CORE_SYMBOLIC_SYM_EXPR_H_
