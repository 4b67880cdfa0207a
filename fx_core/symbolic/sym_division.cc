// FloorDiv and Mod: torch 1.13's FloorDiv.eval (symbolic_shapes.py) and
// sympy 1.11's Mod.eval (sympy/core/mod.py), step by step, on the canonical
// form. sympy.gcd is taken as the monomial content gcd (integer content and
// common powers of atoms), which is sympy's gcd whenever one side is a single
// term. Not matched: the gcd of two sums with a common non-monomial factor
// (gcd(x + 1, 2*x + 2)), and Mod's "by difference" rule and sign reasoning
// for a symbolic divisor (sympy's Mod(x + 1, x + 2) is x + 1; here it stays).
#include <algorithm>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "fx_core/symbolic/sym_expr.h"
#include "fx_core/symbolic/sym_node.h"

namespace fx::sym::internal {
namespace {

enum class Parity { kEven, kOdd, kUnknown };

void check_depth(int depth) {
  if (depth > kMaxEvalDepth) {
    throw FxError("symbolic expression nested too deeply to simplify");
  }
}

bool is_int(const Expr& e, int64_t v) {
  auto i = e.as_integer();
  return i && *i == v;
}

bool is_atom_of(const Expr& e, Expr::Kind kind) {
  return e.node().atom && e.kind() == kind;
}

bool known_integer(const Expr& e);

bool known_positive_atom(const Expr& atom) {
  return atom.kind() == Expr::Kind::kSymbol;
}

// True when sympy knows e != 0: a non-zero integer, or a sum of positive
// terms over symbols.
bool known_nonzero(const Expr& e) {
  if (auto v = e.as_integer()) return *v != 0;
  Poly scratch;
  for (const Term& t : terms_of(e, &scratch)) {
    if (t.coeff < 0) return false;
    for (const Factor& f : t.factors) {
      if (!known_positive_atom(f.atom)) return false;
    }
  }
  return true;
}

// True when sympy knows e != 0 whatever its sign: a non-zero integer, or a
// sum whose terms are all positive or all negative, over symbols (-s is
// non-zero; known_nonzero, which known_positive builds on, says so only of
// positive sums).
bool known_nonzero_either_sign(const Expr& e) {
  if (auto v = e.as_integer()) return *v != 0;
  Poly scratch;
  int sign = 0;
  for (const Term& t : terms_of(e, &scratch)) {
    const int term_sign = t.coeff < 0 ? -1 : 1;
    if (sign != 0 && term_sign != sign) return false;
    sign = term_sign;
    for (const Factor& f : t.factors) {
      if (!known_positive_atom(f.atom)) return false;
    }
  }
  return true;
}

// sympy's is_integer is True (FloorDiv has no assumptions, so None). A Mod
// is an integer when both its operands are and its divisor is non-zero
// (Mod._eval_is_integer), a negative divisor included.
bool known_integer(const Expr& e) {
  const Node& n = e.node();
  if (n.kind == Expr::Kind::kSymbol) return true;
  if (n.kind == Expr::Kind::kFloorDiv) return false;
  if (n.kind == Expr::Kind::kMod) {
    return known_integer(n.operands[0]) && known_integer(n.operands[1]) &&
           known_nonzero_either_sign(n.operands[1]);
  }
  for (const Term& t : n.poly) {
    for (const Factor& f : t.factors) {
      if (!known_integer(f.atom)) return false;
    }
  }
  return true;
}

bool term_known_integer(const Term& t) {
  for (const Factor& f : t.factors) {
    if (!known_integer(f.atom)) return false;
  }
  return true;
}

// sympy's is_even / is_odd (Add._eval_is_odd, Mul._eval_is_odd).
Parity parity(const Expr& e) {
  if (auto v = e.as_integer())
    return *v % 2 == 0 ? Parity::kEven : Parity::kOdd;
  if (e.node().atom || e.kind() == Expr::Kind::kPow) return Parity::kUnknown;
  const Term* odd_constant = nullptr;
  size_t not_even = 0;
  for (const Term& t : e.node().poly) {
    bool even = t.coeff % 2 == 0 && term_known_integer(t);
    if (even) continue;
    ++not_even;
    if (t.factors.empty()) odd_constant = &t;
  }
  if (not_even == 0) return Parity::kEven;
  if (not_even == 1 && odd_constant != nullptr) return Parity::kOdd;
  return Parity::kUnknown;
}

enum class Sign { kPositive, kNonnegative, kNonpositive, kNegative, kUnknown };

std::optional<bool> positive_fact(const Expr& d, int sign = 1);

Sign times(Sign a, Sign b) {
  if (a == Sign::kUnknown || b == Sign::kUnknown) return Sign::kUnknown;
  bool a_neg = a == Sign::kNonpositive || a == Sign::kNegative;
  bool b_neg = b == Sign::kNonpositive || b == Sign::kNegative;
  bool strict = (a == Sign::kPositive || a == Sign::kNegative) &&
                (b == Sign::kPositive || b == Sign::kNegative);
  if (a_neg == b_neg) return strict ? Sign::kPositive : Sign::kNonnegative;
  return strict ? Sign::kNegative : Sign::kNonpositive;
}

// Symbols are positive; Mod(a, b) has the sign of b (not strictly).
Sign atom_sign(const Expr& atom) {
  if (atom.kind() == Expr::Kind::kSymbol) return Sign::kPositive;
  if (atom.kind() != Expr::Kind::kMod) return Sign::kUnknown;
  const Expr& q = atom.node().operands[1];
  if (positive_fact(q) == true) return Sign::kNonnegative;
  if (positive_fact(q, -1) == true) return Sign::kNonpositive;
  return Sign::kUnknown;
}

// The sign of `sign` * t (`sign` 1 or -1).
Sign term_sign(const Term& t, int sign = 1) {
  Sign s = (t.coeff > 0) == (sign > 0) ? Sign::kPositive : Sign::kNegative;
  for (const Factor& f : t.factors) {
    Sign a = atom_sign(f.atom);
    s = times(s, f.power % 2 == 0 ? times(a, a) : a);
  }
  return s;
}

bool symbols_only(const Term& t) {
  for (const Factor& f : t.factors) {
    if (f.atom.kind() != Expr::Kind::kSymbol) return false;
  }
  return true;
}

// What sympy knows of `sign` * d >= 0 / > 0 (`sign` 1 or -1: a negation
// is read off d's terms, not built, which for a sum of 10k terms is a sort).
Sign sign_of(const Expr& d, int sign = 1) {
  if (auto v = d.as_integer()) {
    const int64_t sv = sign * *v;  // no INT64_MIN, so never overflows
    return sv > 0    ? Sign::kPositive
           : sv == 0 ? Sign::kNonnegative
                     : Sign::kUnknown;
  }
  Poly scratch;
  const Poly& poly = terms_of(d, &scratch);
  int64_t c = 0;
  const Term* single = nullptr;  // the one non-constant term, if one
  size_t non_constant = 0;
  for (const Term& t : poly) {
    if (t.factors.empty()) {
      c = sign * t.coeff;
    } else {
      single = &t;
      ++non_constant;
    }
  }
  if (c < 0) {
    // _monotonic_sign: a single positive term over symbols is >= its
    // coefficient.
    if (non_constant != 1 || term_sign(*single, sign) != Sign::kPositive ||
        !symbols_only(*single)) {
      return Sign::kUnknown;
    }
    int64_t s = sign * single->coeff + c;
    return s > 0    ? Sign::kPositive
           : s == 0 ? Sign::kNonnegative
                    : Sign::kUnknown;
  }
  bool positive = c > 0;
  for (const Term& t : poly) {
    if (t.factors.empty()) continue;
    Sign s = term_sign(t, sign);
    if (s != Sign::kPositive && s != Sign::kNonnegative) return Sign::kUnknown;
    positive = positive || s == Sign::kPositive;
  }
  return positive ? Sign::kPositive : Sign::kNonnegative;
}

// sympy's (d > 0), (d >= 0) and (d == 0) as true / false / unknown.
// Of `sign` * d, for `sign` 1 or -1.
std::optional<bool> positive_fact(const Expr& d, int sign) {
  if (sign_of(d, sign) == Sign::kPositive) return true;
  if (sign_of(d, -sign) != Sign::kUnknown) return false;
  return std::nullopt;
}

std::optional<bool> nonnegative_fact(const Expr& d, int sign = 1) {
  if (sign_of(d, sign) != Sign::kUnknown) return true;
  if (sign_of(d, -sign) == Sign::kPositive) return false;
  return std::nullopt;
}

std::optional<bool> zero_fact(const Expr& d) {
  if (auto v = d.as_integer()) return *v == 0;
  if (sign_of(d) == Sign::kPositive || sign_of(d, -1) == Sign::kPositive) {
    return false;
  }
  if (parity(d) == Parity::kOdd) return false;
  return std::nullopt;
}

// The monomial content gcd of p and q (positive), as sympy.gcd.
Term monomial_gcd(const Poly& p, const Poly& q) {
  Term g{0, p.empty() ? std::vector<Factor>{} : p[0].factors};
  for (const Poly* poly : {&p, &q}) {
    for (const Term& t : *poly) {
      g.coeff = std::gcd(g.coeff, t.coeff < 0 ? -t.coeff : t.coeff);
      std::vector<Factor> common;
      for (const Factor& f : g.factors) {
        for (const Factor& h : t.factors) {
          if (compare_exprs(f.atom, h.atom) == 0) {
            common.push_back({f.atom, std::min(f.power, h.power)});
          }
        }
      }
      g.factors = std::move(common);
    }
  }
  if (g.coeff == 0) g.coeff = 1;
  return g;
}

bool is_one(const Term& t) { return t.coeff == 1 && t.factors.empty(); }

// p / g, every term divisible.
Poly divide(const Poly& p, const Term& g) {
  Poly out;
  for (const Term& t : p) {
    Term r{t.coeff / g.coeff, {}};
    for (const Factor& f : t.factors) {
      int64_t power = f.power;
      for (const Factor& h : g.factors) {
        if (compare_exprs(f.atom, h.atom) == 0) power -= h.power;
      }
      if (power > 0) r.factors.push_back({f.atom, power});
    }
    out.push_back(std::move(r));
  }
  return out;
}

// Whether every term of p is divisible by the single term q.
bool divides(const Term& q, const Poly& p) {
  Term g = monomial_gcd(p, {q});
  return g.coeff == (q.coeff < 0 ? -q.coeff : q.coeff) &&
         g.factors.size() == q.factors.size() && [&] {
           for (size_t i = 0; i < g.factors.size(); ++i) {
             if (g.factors[i].power != q.factors[i].power) return false;
           }
           return true;
         }();
}

// sympy's (p/q).is_integer, for a single-term q.
bool ratio_is_integer(const Expr& p, const Expr& q) {
  Poly qp = to_poly(q);
  if (qp.size() != 1) return false;
  Poly pp = to_poly(p);
  if (!divides(qp[0], pp)) return false;
  Term unit = qp[0];
  if (unit.coeff < 0) unit.coeff = -unit.coeff;
  Poly quotient = divide(pp, unit);
  for (const Term& t : quotient) {
    if (!term_known_integer(t)) return false;
  }
  return true;
}

// The sign s with s * e = Abs(e) when sympy's Abs(e) evaluates (e's sign
// known), else nullopt.
std::optional<int> known_abs_sign(const Expr& e) {
  if (nonnegative_fact(e) == true) return 1;
  if (positive_fact(e) == false) return -1;
  return std::nullopt;
}

// number_eval's "by difference": -2|q| < p < 2|q| from the signs. The
// differences |p| - i*|q| are formed once each, never through -p or -q.
std::optional<Expr> by_difference(const Expr& p, const Expr& q) {
  std::optional<int> sp = known_abs_sign(p);
  std::optional<int> sq = known_abs_sign(q);
  if (!sp || !sq) return std::nullopt;
  for (int i = 1; i <= 2; ++i) {
    Expr d = linear_combination(*sp, p, -i * *sq, q);
    if (positive_fact(d, -1) != true) continue;
    bool p_pos = positive_fact(p) == true;
    bool p_neg = positive_fact(p, -1) == true;
    if (positive_fact(q) == true) {
      if (p_pos) return d + q;
      if (p_neg) return -d;
    } else if (positive_fact(q, -1) == true) {
      if (p_pos) return d;
      if (p_neg) return -d + q;
    }
    break;
  }
  return std::nullopt;
}

// Mod.eval's number_eval.
std::optional<Expr> number_eval(const Expr& p, const Expr& q, int depth) {
  if (is_int(q, 0)) throw FxError("symbolic integer modulo by zero");
  if (is_int(p, 0) || p == q || is_negation(p, q) ||
      (is_int(q, 1) && known_integer(p))) {
    return Expr::integer(0);
  }
  auto qv = q.as_integer();
  auto pv = p.as_integer();
  if (qv && pv) return Expr::integer(python_mod(*pv, *qv));
  if (qv && *qv == 2) {
    Parity par = parity(p);
    if (par == Parity::kEven) return Expr::integer(0);
    if (par == Parity::kOdd) return Expr::integer(1);
  }
  if (p.kind() == Expr::Kind::kPow && known_integer(q) &&
      is_int(eval_mod(p.node().poly[0].factors[0].atom, q, depth + 1), 0)) {
    return Expr::integer(0);
  }
  if (ratio_is_integer(p, q)) return Expr::integer(0);
  return by_difference(p, q);
}

size_t count_mods(const Expr& e) { return e.node().mod_count; }

// sympy's could_extract_minus_sign.
bool could_extract_minus_sign(const Expr& e) {
  const Node& n = e.node();
  if (n.atom) return false;
  if (n.poly.size() == 1) {
    return n.kind != Expr::Kind::kPow && n.poly[0].coeff < 0;
  }
  if (n.poly.empty()) return false;
  size_t negative = 0;
  for (const Term& t : n.poly) negative += t.coeff < 0 ? 1 : 0;
  size_t positive = n.poly.size() - negative;
  if (positive != negative) return positive < negative;
  return compare(sort_key(n), sort_key((-e).node())) < 0;
}

// e is sympy's -Mod(a, b): the Mod, else nullopt.
std::optional<Expr> negated_mod(const Expr& e) {
  const Node& n = e.node();
  if (n.atom || n.poly.size() != 1) return std::nullopt;
  const Term& t = n.poly[0];
  if (t.coeff != -1 || t.factors.size() != 1 || t.factors[0].power != 1 ||
      !is_atom_of(t.factors[0].atom, Expr::Kind::kMod)) {
    return std::nullopt;
  }
  return t.factors[0].atom;
}

bool known_nonnegative(const Expr& e) { return nonnegative_fact(e) == true; }

bool known_nonpositive(const Expr& e) {
  return nonnegative_fact(e, -1) == true;
}

// Whether inner_q * (q + k * inner_q) (k is 1 or -1) is known nonnegative
// (want 1) or nonpositive (want -1): the test of sympy's rule for a Mod in a
// Mod. sympy's integers have no bound, so two integers are decided exactly
// here too (in 128 bits: the product of two int64 overflows int64 for
// moduli above about 3e9, and refusing such a text made a printed Mod that
// parsed once fail to parse again). Otherwise, when the signs of both
// factors are known they decide it (a product of terms of one sign each has
// terms of one sign: what the expanded product would give, without forming
// coefficients that may overflow); else the product is formed and asked,
// and a product beyond int64 is not known to have either sign.
bool known_product_sign(const Expr& inner_q, const Expr& q, int k, int want) {
  const auto a = inner_q.as_integer();
  const auto b = q.as_integer();
  if (a && b) {
    const __int128 product =
        static_cast<__int128>(*a) *
        (static_cast<__int128>(*b) + k * static_cast<__int128>(*a));
    return want > 0 ? product >= 0 : product <= 0;
  }
  const Expr second = linear_combination(1, q, k, inner_q);
  const std::optional<bool> a_nonneg = nonnegative_fact(inner_q);
  const std::optional<bool> a_nonpos = nonnegative_fact(inner_q, -1);
  const std::optional<bool> b_nonneg = nonnegative_fact(second);
  const std::optional<bool> b_nonpos = nonnegative_fact(second, -1);
  const bool same = (a_nonneg == true && b_nonneg == true) ||
                    (a_nonpos == true && b_nonpos == true);
  const bool opposite = (a_nonneg == true && b_nonpos == true) ||
                        (a_nonpos == true && b_nonneg == true);
  if (same || opposite) return want > 0 ? same : opposite;
  try {
    const Expr product = inner_q * second;
    return want > 0 ? known_nonnegative(product) : known_nonpositive(product);
  } catch (const IntegerOverflow&) {
    // Coefficients beyond int64, and the factors' signs are not both
    // known: sympy's product then has terms of both signs too (one factor is
    // an integer, or the cancellation that could decide it is beyond us).
    return false;
  }
}

std::optional<Expr> denest(const Expr& p, const Expr& q, int depth) {
  if (is_atom_of(p, Expr::Kind::kMod)) {
    const Expr& inner_q = p.node().operands[1];
    if (is_int(eval_mod(inner_q, q, depth + 1), 0)) {
      return eval_mod(p.node().operands[0], q, depth + 1);
    }
    if (known_product_sign(inner_q, q, -1, 1)) return p;
  } else if (auto m = negated_mod(p)) {
    const Expr& inner_q = m->node().operands[1];
    if (is_int(eval_mod(inner_q, q, depth + 1), 0)) {
      return eval_mod(-m->node().operands[0], q, depth + 1);
    }
    if (known_product_sign(inner_q, q, 1, -1)) return p;
  }
  return std::nullopt;
}

// Mod.eval's Add branch: Mod(Mod(a, q) + b, q) -> Mod(a + b, q).
// The terms are summed once, at the end: adding them one at a time made a
// sum of n terms cost n sorts of a growing sum.
std::optional<Expr> merge_mod_terms(const Expr& p, const Expr& q, int depth) {
  std::vector<Expr> net;
  bool any_mod = false;
  for (const Term& t : p.node().poly) {
    Expr term = from_term(t);
    if (!is_atom_of(term, Expr::Kind::kMod)) {
      net.push_back(std::move(term));
      continue;
    }
    if (term.node().operands[1] != q) return std::nullopt;
    any_mod = true;
    net.push_back(term.node().operands[0]);
  }
  if (!any_mod) return std::nullopt;
  return eval_mod(sym::sum(net), q, depth + 1);
}

// Mod.eval's Mul branch. Returns the result, or rewrites *p (integer
// coefficient reduced modulo q) and returns nullopt. sympy 1.11 (torch
// 1.13's) distributes whenever every Mod factor has the divisor q, without
// asking whether the factors are integers (later sympy asks): so
// Mod(3*Mod(FloorDiv(x, 9), 10), 10) is 3*Mod(FloorDiv(x, 9), 10), although
// torch's FloorDiv is not known to be an integer.
std::optional<Expr> mul_branch(Expr* p, const Expr& q, int depth) {
  const Term& t = p->node().poly[0];
  std::vector<Expr> non_mod_l;
  std::vector<Expr> mod_l;
  if (t.coeff != 1) non_mod_l.push_back(Expr::integer(t.coeff));
  for (const Factor& f : t.factors) {
    Expr factor = sym::pow(f.atom, f.power);
    bool is_mod = f.power == 1 && f.atom.kind() == Expr::Kind::kMod;
    (is_mod ? mod_l : non_mod_l).push_back(factor);
  }
  bool same_q = !mod_l.empty();
  for (const Expr& m : mod_l) same_q = same_q && m.node().operands[1] == q;
  if (same_q) {
    Expr prod_non_mod = Expr::integer(1);
    Expr net = Expr::integer(1);
    for (const Expr& x : non_mod_l) {
      Expr j = eval_mod(x, q, depth + 1);
      if (is_atom_of(j, Expr::Kind::kMod)) {
        net = net * j.node().operands[0];
      } else {
        prod_non_mod = prod_non_mod * j;
      }
    }
    for (const Expr& m : mod_l) net = net * m.node().operands[0];
    return prod_non_mod * eval_mod(net, q, depth + 1);
  }
  auto qv = q.as_integer();
  if (qv && *qv != 1 && t.coeff != 1 && python_mod(t.coeff, *qv) != 0) {
    Term reduced = t;
    reduced.coeff = python_mod(t.coeff, *qv);
    *p = from_term(reduced);
  }
  return std::nullopt;
}

// Mod.eval's "simplify terms": each term replaced by its Mod when that
// adds no Mod.
Expr reduce_terms(const Expr& p, const Expr& q, int depth) {
  std::vector<Expr> terms;
  bool changed = false;
  for (const Term& t : p.node().poly) {
    Expr term = from_term(t);
    Expr reduced = eval_mod(term, q, depth + 1);
    if (count_mods(reduced) > count_mods(term)) {
      terms.push_back(std::move(term));
    } else {
      changed = changed || reduced != term;
      terms.push_back(std::move(reduced));
    }
  }
  return changed ? sym::sum(terms) : p;
}

// sympy's gcd_terms(e), which Mod.eval applies to p / G and q / G after
// taking out their gcd G (and FloorDiv.eval's sympy.simplify likewise): a
// sum is left as it is, but a product is rebuilt factor by factor, each
// Mod or FloorDiv atom made again from its rebuilt operands with
// evaluation. So a Mod that an earlier step kept unevaluated (Mod.eval's
// last step, when nothing changed) is simplified now: in
// Mod(2*Mod(4*x*Mod(y, 5), 5), 4) the inner Mod is 4*Mod(x*y, 5), even,
// and the whole is 0, as in sympy. (Without this, the first reading of a
// text left such a Mod and reading its print back decided it.)
Expr rebuilt(const Expr& e, int depth);

// A Mod or FloorDiv atom made again from its rebuilt operands; any other
// atom as it is.
Expr rebuilt_atom(const Expr& atom, int depth) {
  const Expr::Kind k = atom.kind();
  if (k != Expr::Kind::kMod && k != Expr::Kind::kFloorDiv) return atom;
  const Expr base = rebuilt(atom.node().operands[0], depth + 1);
  const Expr divisor = rebuilt(atom.node().operands[1], depth + 1);
  return k == Expr::Kind::kMod ? eval_mod(base, divisor, depth + 1)
                               : eval_floordiv(base, divisor, depth + 1);
}

Expr rebuilt(const Expr& e, int depth) {
  check_depth(depth);
  const Expr::Kind kind = e.kind();
  if (kind == Expr::Kind::kInteger || kind == Expr::Kind::kSymbol ||
      kind == Expr::Kind::kAdd) {
    return e;
  }
  if (e.node().atom) return rebuilt_atom(e, depth);
  const Term& t = e.node().poly[0];
  const bool has_division =
      std::any_of(t.factors.begin(), t.factors.end(), [](const Factor& f) {
        return f.atom.kind() == Expr::Kind::kMod ||
               f.atom.kind() == Expr::Kind::kFloorDiv;
      });
  if (!has_division) return e;  // nothing a rebuild could change
  Expr out = Expr::integer(t.coeff);
  for (const Factor& f : t.factors) {
    out = out * sym::pow(rebuilt_atom(f.atom, depth), f.power);
  }
  return out;
}

// p / g as Mod.eval and FloorDiv.eval go on with it: divided, then
// rebuilt as sympy's gcd_terms / simplify rebuild it.
Expr quotient(const Poly& p, const Term& g, int depth) {
  return rebuilt(from_poly(divide(p, g)), depth);
}

}  // namespace

bool known_odd(const Expr& e) { return parity(e) == Parity::kOdd; }

bool known_positive(const Expr& e) {
  if (auto v = e.as_integer()) return *v > 0;
  return known_nonzero(e);
}

std::optional<bool> is_positive(const Expr& d) { return positive_fact(d); }
std::optional<bool> is_nonnegative(const Expr& d) {
  return nonnegative_fact(d);
}
std::optional<bool> is_zero(const Expr& d) { return zero_fact(d); }

Expr eval_floordiv(const Expr& base, const Expr& divisor, int depth) {
  check_depth(depth);
  if (is_int(base, 0)) return Expr::integer(0);
  if (is_int(divisor, 1)) return base;
  auto b = base.as_integer();
  auto d = divisor.as_integer();
  if (b && d) return Expr::integer(python_floordiv(*b, *d));
  if (is_int(divisor, 0)) throw FxError("symbolic integer division by zero");
  if (is_atom_of(base, Expr::Kind::kFloorDiv)) {
    const Node& inner = base.node();
    return eval_floordiv(inner.operands[0], inner.operands[1] * divisor,
                         depth + 1);
  }
  Poly bp = to_poly(base);
  Poly dp = to_poly(divisor);
  Term g = monomial_gcd(bp, dp);
  if (!is_one(g)) {
    return eval_floordiv(quotient(bp, g, depth + 1), quotient(dp, g, depth + 1),
                         depth + 1);
  }
  return make_atom(Expr::Kind::kFloorDiv, base, divisor);
}

Expr eval_mod(const Expr& p_in, const Expr& q_in, int depth) {
  check_depth(depth);
  if (auto rv = number_eval(p_in, q_in, depth)) return *rv;
  Expr p = p_in;
  Expr q = q_in;
  bool is_mod = is_atom_of(p, Expr::Kind::kMod) || negated_mod(p);
  if (is_mod) {
    if (auto rv = denest(p, q, depth)) return *rv;
  } else if (p.kind() == Expr::Kind::kAdd) {
    if (auto rv = merge_mod_terms(p, q, depth)) return *rv;
  } else if (p.kind() == Expr::Kind::kMul) {
    if (auto rv = mul_branch(&p, q, depth)) return *rv;
  }
  Term g = monomial_gcd(to_poly(p), to_poly(q));
  Expr scale = from_term(g);
  if (!is_one(g)) {
    p = quotient(to_poly(p), g, depth + 1);
    q = quotient(to_poly(q), g, depth + 1);
  }
  Expr p_was = p;
  Expr q_was = q;
  if (p.kind() == Expr::Kind::kAdd) p = reduce_terms(p, q, depth);
  if (could_extract_minus_sign(p) && could_extract_minus_sign(q)) {
    scale = -scale;
    p = -p;
    q = -q;
  }
  if (auto rv = number_eval(p, q, depth)) return *rv * scale;
  if (p != p_was || q != q_was) return scale * eval_mod(p, q, depth + 1);
  return scale * make_atom(Expr::Kind::kMod, p, q);
}

}  // namespace fx::sym::internal
