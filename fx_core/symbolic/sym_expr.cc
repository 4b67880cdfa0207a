// fx::sym::Expr: construction, arithmetic, substitution and evaluation over
// the canonical node (sym_node.h); printing is in sym_print.cc, FloorDiv and
// Mod in sym_division.cc.
#include "fx_core/symbolic/sym_expr.h"

#include <algorithm>
#include <limits>
#include <set>
#include <utility>

#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "fx_core/symbolic/sym_node.h"

namespace fx::sym {

using internal::Factor;
using internal::from_poly;
using internal::Node;
using internal::Poly;
using internal::Term;
using internal::terms_of;

namespace {

void collect_symbols(const Expr& e, std::set<std::string>* out) {
  const Node& n = e.node();
  if (n.kind == Expr::Kind::kSymbol) {
    out->insert(n.name);
  } else if (n.atom) {
    for (const Expr& op : n.operands) collect_symbols(op, out);
  } else {
    for (const Term& t : n.poly) {
      for (const Factor& f : t.factors) collect_symbols(f.atom, out);
    }
  }
}

int64_t int_pow(int64_t base, int64_t exponent) {
  int64_t result = 1;
  while (exponent > 0) {
    if (exponent & 1) result = internal::checked_mul(result, base);
    exponent >>= 1;
    if (exponent > 0) base = internal::checked_mul(base, base);
  }
  return result;
}

Expr substitute_atom(const Expr& atom, const Substitution& replacements) {
  const Node& n = atom.node();
  if (n.kind == Expr::Kind::kSymbol) {
    auto it = replacements.find(n.name);
    return it == replacements.end() ? atom : it->second;
  }
  Expr base = n.operands[0].substitute(replacements);
  Expr divisor = n.operands[1].substitute(replacements);
  return n.kind == Expr::Kind::kFloorDiv ? floordiv(base, divisor)
                                         : mod(base, divisor);
}

int64_t evaluate_atom(const Node& n, const Bindings& bindings) {
  if (n.kind == Expr::Kind::kSymbol) {
    auto it = bindings.find(n.name);
    if (it == bindings.end()) {
      throw FxError(cat("no value for the symbol ", n.name));
    }
    return it->second;
  }
  int64_t a = n.operands[0].evaluate(bindings);
  // FloorDiv.eval tests for a zero base first: FloorDiv(0, 0) is 0.
  if (a == 0 && n.kind == Expr::Kind::kFloorDiv) return 0;
  int64_t b = n.operands[1].evaluate(bindings);
  return n.kind == Expr::Kind::kFloorDiv ? internal::python_floordiv(a, b)
                                         : internal::python_mod(a, b);
}

}  // namespace

Expr::Expr() : Expr(from_poly({})) {}

Expr::Expr(std::shared_ptr<const internal::Node> node)
    : node_(std::move(node)) {}

Expr Expr::integer(int64_t value) {
  if (value == std::numeric_limits<int64_t>::min()) {
    throw FxError("integer overflow in symbolic integer (INT64_MIN)");
  }
  if (value == 0) return from_poly({});
  return from_poly({Term{value, {}}});
}

Expr Expr::symbol(std::string_view name) { return internal::make_symbol(name); }

Expr::Kind Expr::kind() const { return node_->kind; }

size_t Expr::hash() const { return node_->hash; }

std::optional<int64_t> Expr::as_integer() const {
  if (node_->kind != Kind::kInteger) return std::nullopt;
  return node_->poly.empty() ? 0 : node_->poly[0].coeff;
}

const std::string& Expr::name() const {
  if (node_->kind != Kind::kSymbol) {
    throw FxError(cat("name() of a non-symbol: ", str()));
  }
  return node_->name;
}

std::vector<Expr> Expr::args() const {
  if (node_->atom) return node_->operands;
  std::vector<Expr> out;
  if (node_->kind == Kind::kInteger) return out;
  if (node_->kind == Kind::kAdd) {
    for (const Term* t : internal::ordered_terms(node_->poly)) {
      out.push_back(internal::from_term(*t));
    }
    return out;
  }
  const Term& t = node_->poly[0];
  if (node_->kind == Kind::kPow) {
    return {t.factors[0].atom, integer(t.factors[0].power)};
  }
  if (t.coeff != 1) out.push_back(integer(t.coeff));
  for (const Factor& f : t.factors) {
    out.push_back(f.power == 1 ? f.atom : sym::pow(f.atom, f.power));
  }
  return out;
}

std::vector<std::string> Expr::free_symbols() const {
  std::set<std::string> names;
  collect_symbols(*this, &names);
  return std::vector<std::string>(names.begin(), names.end());
}

Expr Expr::substitute(const Substitution& replacements) const {
  if (node_->atom) return substitute_atom(*this, replacements);
  std::vector<Expr> terms;
  for (const Term& t : node_->poly) {
    Expr product = integer(t.coeff);
    for (const Factor& f : t.factors) {
      product =
          product * sym::pow(substitute_atom(f.atom, replacements), f.power);
    }
    terms.push_back(std::move(product));
  }
  return sym::sum(terms);
}

int64_t Expr::evaluate(const Bindings& bindings) const {
  if (node_->atom) return evaluate_atom(*node_, bindings);
  int64_t sum = 0;
  for (const Term& t : node_->poly) {
    int64_t product = t.coeff;
    for (const Factor& f : t.factors) {
      int64_t base = evaluate_atom(f.atom.node(), bindings);
      product = internal::checked_mul(product, int_pow(base, f.power));
    }
    sum = internal::checked_add(sum, product);
  }
  return sum;
}

namespace {

// Canonical forms are equal exactly when their structures are.
bool same_terms(const Poly& a, const Poly& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const Term &x = a[i], &y = b[i];
    if (x.coeff != y.coeff || x.factors.size() != y.factors.size()) {
      return false;
    }
    for (size_t k = 0; k < x.factors.size(); ++k) {
      if (x.factors[k].power != y.factors[k].power ||
          x.factors[k].atom != y.factors[k].atom) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

bool operator==(const Expr& a, const Expr& b) {
  const Node &x = a.node(), &y = b.node();
  if (&x == &y) return true;
  if (x.hash != y.hash || x.kind != y.kind || x.atom != y.atom) return false;
  if (x.kind == Expr::Kind::kSymbol) return x.name == y.name;
  if (x.atom) return x.operands == y.operands;
  return same_terms(x.poly, y.poly);
}

// The operands' terms are read in place (internal::terms_of), not copied.
Expr operator+(const Expr& a, const Expr& b) {
  Poly sa, sb;
  return from_poly(internal::poly_add(terms_of(a, &sa), terms_of(b, &sb)));
}

Expr operator-(const Expr& a, const Expr& b) { return a + (-b); }

Expr sum(const std::vector<Expr>& terms) {
  Poly all;
  Poly scratch;
  for (const Expr& t : terms) {
    const Poly& p = terms_of(t, &scratch);
    all.insert(all.end(), p.begin(), p.end());
  }
  return from_poly(internal::poly_sum(std::move(all)));
}

Expr operator*(const Expr& a, const Expr& b) {
  Poly sa, sb;
  return from_poly(internal::poly_mul(terms_of(a, &sa), terms_of(b, &sb)));
}

Expr operator-(const Expr& a) {
  Poly scratch;
  return from_poly(internal::poly_scale(terms_of(a, &scratch), -1));
}

Expr pow(const Expr& base, int64_t exponent) {
  if (exponent < 0) {
    throw FxError(cat("negative exponent ", exponent, " of ", base.str()));
  }
  if (exponent == 0) return Expr::integer(1);
  if (base.node().atom) {
    return from_poly({Term{1, {Factor{base, exponent}}}});
  }
  if (auto v = base.as_integer()) return Expr::integer(int_pow(*v, exponent));
  Expr result = Expr::integer(1);
  Expr square = base;
  while (exponent > 0) {
    if (exponent & 1) result = result * square;
    exponent >>= 1;
    if (exponent > 0) square = square * square;
  }
  return result;
}

Expr floordiv(const Expr& base, const Expr& divisor) {
  return internal::eval_floordiv(base, divisor, 0);
}

Expr mod(const Expr& p, const Expr& q) { return internal::eval_mod(p, q, 0); }

}  // namespace fx::sym
