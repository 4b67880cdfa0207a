// Expr::str(): sympy 1.11's StrPrinter on the canonical form: terms in
// as_ordered_terms() order, factors in sort_key order, a Mod parenthesized
// in a product with a positive coefficient and as the base of a power (its
// precedence is Mul's), never elsewhere.
#include <string>

#include "fx_core/support/strings.h"
#include "fx_core/symbolic/sym_expr.h"
#include "fx_core/symbolic/sym_node.h"

namespace fx::sym {
namespace {

using internal::Factor;
using internal::Node;
using internal::Term;

// sympy's precedence values.
constexpr int kPrecAdd = 40;
constexpr int kPrecMul = 50;
constexpr int kPrecPow = 60;

void print_expr(const Expr& e, std::string* out);

void print_atom(const Node& n, std::string* out) {
  if (n.kind == Expr::Kind::kSymbol) {
    out->append(n.name);
    return;
  }
  out->append(n.kind == Expr::Kind::kFloorDiv ? "FloorDiv(" : "Mod(");
  print_expr(n.operands[0], out);
  out->append(", ");
  print_expr(n.operands[1], out);
  out->push_back(')');
}

// An atom in a context of precedence `prec` (parenthesize(strict=False)).
void print_operand(const Node& atom, int prec, std::string* out) {
  bool parens = atom.kind == Expr::Kind::kMod && kPrecMul <= prec;
  if (parens) out->push_back('(');
  print_atom(atom, out);
  if (parens) out->push_back(')');
}

void print_factor(const Factor& f, int prec, std::string* out) {
  if (f.power == 1) {
    print_operand(f.atom.node(), prec, out);
    return;
  }
  print_operand(f.atom.node(), kPrecPow, out);
  append(out, "**", f.power);
}

void print_term(const Term& t, std::string* out) {
  if (t.factors.empty()) {
    append(out, t.coeff);
    return;
  }
  if (t.coeff == 1 && t.factors.size() == 1) {
    // An atom (a term of a sum) or a power.
    if (t.factors[0].power == 1) {
      print_atom(t.factors[0].atom.node(), out);
    } else {
      print_factor(t.factors[0], kPrecPow, out);
    }
    return;
  }
  // A product: the sign, the coefficient unless 1, the factors.
  int prec = t.coeff < 0 ? kPrecAdd : kPrecMul;
  if (t.coeff < 0) out->push_back('-');
  bool first = true;
  if (t.coeff != 1 && t.coeff != -1) {
    append(out, t.coeff < 0 ? -t.coeff : t.coeff);
    first = false;
  }
  for (const Factor& f : t.factors) {
    if (!first) out->push_back('*');
    first = false;
    print_factor(f, prec, out);
  }
}

void print_sum(const internal::Poly& poly, std::string* out) {
  bool first = true;
  for (const Term* t : internal::ordered_terms(poly)) {
    std::string s;
    print_term(*t, &s);
    bool negative = s[0] == '-';
    if (first) {
      out->append(s);
    } else {
      out->append(negative ? " - " : " + ");
      out->append(s, negative ? 1 : 0, std::string::npos);
    }
    first = false;
  }
}

void print_expr(const Expr& e, std::string* out) {
  const Node& n = e.node();
  if (n.atom) {
    print_atom(n, out);
  } else if (n.poly.empty()) {
    out->push_back('0');
  } else if (n.poly.size() == 1) {
    print_term(n.poly[0], out);
  } else {
    print_sum(n.poly, out);
  }
}

}  // namespace

std::string Expr::str() const {
  std::string out;
  print_expr(*this, &out);
  return out;
}

}  // namespace fx::sym
