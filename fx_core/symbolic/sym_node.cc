// The canonical node: checked integers, sympy's sort keys, polynomials.
#include "fx_core/symbolic/sym_node.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "fx_core/symbolic/work_budget.h"

namespace fx::sym::internal {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

int64_t in_range(bool overflowed, int64_t value, const char* what) {
  if (overflowed || value == kMin) {
    throw IntegerOverflow(cat("integer overflow in symbolic ", what));
  }
  return value;
}

KeyPtr make_int_key(int64_t i) {
  auto k = std::make_shared<Key>();
  k->tag = Key::Tag::kInt;
  k->i = i;
  return k;
}

// Keys are immutable, so equal subtrees are shared: the constant parts of
// sympy's keys (class keys, small integers, empty tuples) exist once, and
// an atom's argument key is taken from its own memoized key. A sum of 10k
// terms otherwise made some 25 allocations per factor of each term.
constexpr int64_t kFirstSharedKey = -8, kLastSharedKey = 256;

KeyPtr int_key(int64_t i) {
  if (i < kFirstSharedKey || i > kLastSharedKey) return make_int_key(i);
  static const std::vector<KeyPtr> shared = [] {
    std::vector<KeyPtr> out;
    for (int64_t v = kFirstSharedKey; v <= kLastSharedKey; ++v) {
      out.push_back(make_int_key(v));
    }
    return out;
  }();
  return shared[static_cast<size_t>(i - kFirstSharedKey)];
}

KeyPtr str_key(std::string s) {
  auto k = std::make_shared<Key>();
  k->tag = Key::Tag::kStr;
  k->s = std::move(s);
  return k;
}

KeyPtr tuple_key(std::vector<KeyPtr> items) {
  auto k = std::make_shared<Key>();
  k->tag = Key::Tag::kTuple;
  k->items = std::move(items);
  return k;
}

// sympy's class_key: (1, 0, 'Number'), (2, 0, 'Symbol'), ...
KeyPtr make_class_key(Expr::Kind kind) {
  switch (kind) {
    case Expr::Kind::kInteger:
      return tuple_key({int_key(1), int_key(0), str_key("Number")});
    case Expr::Kind::kSymbol:
      return tuple_key({int_key(2), int_key(0), str_key("Symbol")});
    case Expr::Kind::kMul:
      return tuple_key({int_key(3), int_key(0), str_key("Mul")});
    case Expr::Kind::kAdd:
      return tuple_key({int_key(3), int_key(1), str_key("Add")});
    case Expr::Kind::kPow:
      return tuple_key({int_key(3), int_key(2), str_key("Pow")});
    case Expr::Kind::kFloorDiv:
      return tuple_key({int_key(4), int_key(10000), str_key("FloorDiv")});
    case Expr::Kind::kMod:
      return tuple_key({int_key(4), int_key(10000), str_key("Mod")});
  }
  return nullptr;
}

KeyPtr class_key(Expr::Kind kind) {
  static const std::vector<KeyPtr> shared = [] {
    std::vector<KeyPtr> out;  // in the order of Expr::Kind
    for (int k = 0; k <= static_cast<int>(Expr::Kind::kMod); ++k) {
      out.push_back(make_class_key(static_cast<Expr::Kind>(k)));
    }
    return out;
  }();
  return shared[static_cast<size_t>(kind)];
}

// Number.sort_key: (class_key, (0, ()), (), n).
KeyPtr number_key(int64_t n) {
  static const KeyPtr no_args = tuple_key({int_key(0), tuple_key({})});
  static const KeyPtr empty = tuple_key({});
  static const KeyPtr one =
      tuple_key({class_key(Expr::Kind::kInteger), no_args, empty, int_key(1)});
  if (n == 1) return one;
  return tuple_key(
      {class_key(Expr::Kind::kInteger), no_args, empty, int_key(n)});
}

// The (len(args), args) part of an atom's key.
KeyPtr make_atom_args_key(const Node& atom) {
  if (atom.kind == Expr::Kind::kSymbol) {
    return tuple_key({int_key(1), tuple_key({str_key(atom.name)})});
  }
  const Node& base = atom.operands[0].node();
  const Node& divisor = atom.operands[1].node();
  sort_key(base);
  sort_key(divisor);
  return tuple_key({int_key(2), tuple_key({base.key, divisor.key})});
}

// The same, shared with the atom's own (memoized) key, which holds it.
KeyPtr atom_args_key(const Node& atom) {
  sort_key(atom);
  return atom.key->items[1];
}

// Expr.sort_key of coeff * atom**power.
KeyPtr power_key(const Expr& atom, int64_t power, int64_t coeff) {
  const Node& n = atom.node();
  return tuple_key(
      {class_key(n.kind), atom_args_key(n), number_key(power), int_key(coeff)});
}

KeyPtr term_key(const Term& t) {
  if (t.factors.empty()) return number_key(t.coeff);
  if (t.factors.size() == 1) {
    return power_key(t.factors[0].atom, t.factors[0].power, t.coeff);
  }
  std::vector<KeyPtr> factors;
  for (const Factor& f : t.factors) {
    factors.push_back(power_key(f.atom, f.power, 1));
  }
  KeyPtr args = tuple_key(
      {int_key(static_cast<int64_t>(factors.size())), tuple_key(factors)});
  return tuple_key(
      {class_key(Expr::Kind::kMul), args, number_key(1), int_key(t.coeff)});
}

Expr::Kind poly_kind(const Poly& poly) {
  if (poly.empty() || (poly.size() == 1 && poly[0].factors.empty())) {
    return Expr::Kind::kInteger;
  }
  if (poly.size() > 1) return Expr::Kind::kAdd;
  const Term& t = poly[0];
  if (t.coeff == 1 && t.factors.size() == 1) return Expr::Kind::kPow;
  return Expr::Kind::kMul;
}

std::vector<Factor> multiply_factors(const std::vector<Factor>& a,
                                     const std::vector<Factor>& b) {
  std::vector<Factor> out;
  out.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    int c = i == a.size()   ? 1
            : j == b.size() ? -1
                            : compare_exprs(a[i].atom, b[j].atom);
    if (c < 0) {
      out.push_back(a[i++]);
    } else if (c > 0) {
      out.push_back(b[j++]);
    } else {
      out.push_back({a[i].atom, checked_add(a[i].power, b[j].power)});
      ++i, ++j;
    }
  }
  return out;
}

}  // namespace

int compare(const Key& a, const Key& b) {
  if (a.tag != b.tag) return a.tag < b.tag ? -1 : 1;
  switch (a.tag) {
    case Key::Tag::kInt:
      return a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
    case Key::Tag::kStr:
      return a.s.compare(b.s) < 0 ? -1 : a.s == b.s ? 0 : 1;
    case Key::Tag::kTuple:
      break;
  }
  size_t n = std::min(a.items.size(), b.items.size());
  for (size_t i = 0; i < n; ++i) {
    if (a.items[i] == b.items[i]) continue;
    int c = compare(*a.items[i], *b.items[i]);
    if (c != 0) return c;
  }
  if (a.items.size() == b.items.size()) return 0;
  return a.items.size() < b.items.size() ? -1 : 1;
}

int64_t checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  bool overflowed = __builtin_add_overflow(a, b, &r);
  return in_range(overflowed, r, "addition");
}

int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  bool overflowed = __builtin_mul_overflow(a, b, &r);
  return in_range(overflowed, r, "multiplication");
}

int64_t checked_neg(int64_t a) { return in_range(a == kMin, -a, "negation"); }

int64_t python_floordiv(int64_t a, int64_t b) {
  if (b == 0) throw FxError("symbolic integer division by zero");
  if (a == kMin || b == kMin) in_range(true, 0, "division");
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t python_mod(int64_t a, int64_t b) {
  if (b == 0) throw FxError("symbolic integer modulo by zero");
  if (a == kMin || b == kMin) in_range(true, 0, "modulo");
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

namespace {

// Two atoms' keys are (class_key, args, 1, 1), so they are ordered by what
// their keys start with, without building the keys: the class (all seven
// differ), then a symbol's name or a division's operands. A FloorDiv of a
// sum of 10k terms is then keyed only when ordered against another one.
int compare_atoms(const Node& a, const Node& b) {
  if (a.kind != b.kind) return compare(*class_key(a.kind), *class_key(b.kind));
  if (a.kind == Expr::Kind::kSymbol) {
    const int c = a.name.compare(b.name);
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  const int c = compare_exprs(a.operands[0], b.operands[0]);
  return c != 0 ? c : compare_exprs(a.operands[1], b.operands[1]);
}

}  // namespace

int compare_exprs(const Expr& a, const Expr& b) {
  if (&a.node() == &b.node()) return 0;
  if (a.node().atom && b.node().atom) return compare_atoms(a.node(), b.node());
  return compare(sort_key(a.node()), sort_key(b.node()));
}

int compare_monomials(const Term& a, const Term& b) {
  size_t n = std::min(a.factors.size(), b.factors.size());
  for (size_t i = 0; i < n; ++i) {
    int c = compare_exprs(a.factors[i].atom, b.factors[i].atom);
    if (c != 0) return c;
    if (a.factors[i].power != b.factors[i].power) {
      return a.factors[i].power < b.factors[i].power ? -1 : 1;
    }
  }
  if (a.factors.size() == b.factors.size()) return 0;
  return a.factors.size() < b.factors.size() ? -1 : 1;
}

KeyPtr atom_key(const Node& atom) {
  return tuple_key({class_key(atom.kind), make_atom_args_key(atom),
                    number_key(1), int_key(1)});
}

KeyPtr poly_key(const Poly& poly) {
  if (poly.empty()) return number_key(0);
  if (poly.size() == 1) return term_key(poly[0]);
  std::vector<KeyPtr> terms;
  for (const Term* t : ordered_terms(poly)) terms.push_back(term_key(*t));
  KeyPtr args = tuple_key(
      {int_key(static_cast<int64_t>(terms.size())), tuple_key(terms)});
  return tuple_key(
      {class_key(Expr::Kind::kAdd), args, number_key(1), int_key(1)});
}

std::vector<const Term*> ordered_terms(const Poly& poly) {
  std::vector<const Term*> out;
  for (const Term& t : poly) out.push_back(&t);
  // sympy's special case: a positive number and (negative number)*factor
  // print number first ("3 - x").
  if (poly.size() == 2) {
    const Term* num = poly[0].factors.empty()   ? &poly[0]
                      : poly[1].factors.empty() ? &poly[1]
                                                : nullptr;
    const Term* other = num == &poly[0] ? &poly[1] : &poly[0];
    if (num != nullptr && num->coeff > 0 && other->coeff < 0 &&
        other->factors.size() == 1) {
      return {num, other};
    }
  }
  // Lex order on exponent vectors over the atoms sorted by key, larger
  // exponents first; then the coefficient, ascending.
  std::stable_sort(out.begin(), out.end(), [](const Term* a, const Term* b) {
    size_t i = 0, j = 0;
    while (i < a->factors.size() || j < b->factors.size()) {
      int c = i == a->factors.size() ? 1
              : j == b->factors.size()
                  ? -1
                  : compare_exprs(a->factors[i].atom, b->factors[j].atom);
      if (c < 0) return true;  // a has the smaller atom, b has it 0 times
      if (c > 0) return false;
      if (a->factors[i].power != b->factors[j].power) {
        return a->factors[i].power > b->factors[j].power;
      }
      ++i, ++j;
    }
    return a->coeff < b->coeff;
  });
  return out;
}

namespace {

size_t mix(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

size_t saturating_add(size_t a, size_t b) {
  return a > std::numeric_limits<size_t>::max() - b
             ? std::numeric_limits<size_t>::max()
             : a + b;
}

// `size` when it is at most kMaxSize, else FxError.
size_t checked_size(size_t size) {
  if (size > kMaxSize) {
    throw FxError(cat("symbolic expression of more than ", kMaxSize,
                      " parts (terms and atoms, a repeated part counted each "
                      "time it occurs)"));
  }
  return size;
}

// What a node made of `poly` records of it, in one pass over the terms.
struct PolySummary {
  size_t hash = 0x51ed27;  // of the structure
  size_t mod_count = 0;    // Node::mod_count
  size_t size = 0;         // Node::size
};
PolySummary summarize(const Poly& poly) {
  PolySummary s;
  for (const Term& t : poly) {
    s.hash = mix(s.hash, std::hash<int64_t>()(t.coeff));
    s.size = saturating_add(s.size, 1);
    for (const Factor& f : t.factors) {
      const Node& atom = f.atom.node();
      s.hash = mix(mix(s.hash, atom.hash), std::hash<int64_t>()(f.power));
      s.mod_count = saturating_add(s.mod_count, atom.mod_count);
      s.size = saturating_add(s.size, atom.size);
    }
  }
  s.size = checked_size(std::max<size_t>(s.size, 1));
  return s;
}

}  // namespace

Expr make_symbol(std::string_view name) {
  if (name.empty()) throw FxError("a symbol needs a name");
  auto n = std::make_shared<Node>();
  n->kind = Expr::Kind::kSymbol;
  n->atom = true;
  n->name = std::string(name);
  n->hash = std::hash<std::string_view>()(name);
  return Expr(std::move(n));
}

Expr make_atom(Expr::Kind kind, const Expr& base, const Expr& divisor) {
  charge_work(1);
  auto n = std::make_shared<Node>();
  n->kind = kind;
  n->atom = true;
  n->operands = {base, divisor};
  n->hash = mix(mix(static_cast<size_t>(kind), base.node().hash),
                divisor.node().hash);
  n->mod_count = saturating_add(
      kind == Expr::Kind::kMod ? 1 : 0,
      saturating_add(base.node().mod_count, divisor.node().mod_count));
  n->size = checked_size(
      saturating_add(1, saturating_add(base.node().size, divisor.node().size)));
  return Expr(std::move(n));
}

Poly to_poly(const Expr& e) {
  if (e.node().atom) return {Term{1, {Factor{e, 1}}}};
  return e.node().poly;
}

const Poly& terms_of(const Expr& e, Poly* scratch) {
  if (!e.node().atom) return e.node().poly;
  *scratch = to_poly(e);
  return *scratch;
}

const Key& sort_key(const Node& node) {
  std::call_once(node.key_once, [&node] {
    node.key = node.atom ? atom_key(node) : poly_key(node.poly);
  });
  return *node.key;
}

namespace {

constexpr int64_t kFirstShared = -8, kLastShared = 256;

void check_term_count(size_t n) {
  if (n > kMaxTerms) {
    throw FxError(
        cat("symbolic expression of more than ", kMaxTerms, " terms"));
  }
}

Expr make_poly_node(Poly poly) {
  charge_work(1);
  auto n = std::make_shared<Node>();
  n->kind = poly_kind(poly);
  n->atom = false;
  const PolySummary summary = summarize(poly);
  n->hash = summary.hash;
  n->mod_count = summary.mod_count;
  n->size = summary.size;
  n->poly = std::move(poly);
  return Expr(std::move(n));
}

// The integers kFirstShared..kLastShared, made once: sizes, strides and
// their arithmetic make these constantly.
const std::vector<Expr>& shared_integers() {
  static const std::vector<Expr> all = [] {
    std::vector<Expr> out;
    for (int64_t v = kFirstShared; v <= kLastShared; ++v) {
      out.push_back(make_poly_node(v == 0 ? Poly{} : Poly{Term{v, {}}}));
    }
    return out;
  }();
  return all;
}

}  // namespace

Expr from_poly(Poly poly) {
  if (poly.size() == 1 && poly[0].coeff == 1 && poly[0].factors.size() == 1 &&
      poly[0].factors[0].power == 1) {
    return poly[0].factors[0].atom;
  }
  if (poly.empty() || (poly.size() == 1 && poly[0].factors.empty())) {
    int64_t v = poly.empty() ? 0 : poly[0].coeff;
    if (v >= kFirstShared && v <= kLastShared) {
      return shared_integers()[static_cast<size_t>(v - kFirstShared)];
    }
  }
  return make_poly_node(std::move(poly));
}

Expr from_term(const Term& term) { return from_poly({term}); }

Poly poly_sum(Poly terms) {
  charge_work(terms.size());
  std::sort(terms.begin(), terms.end(), [](const Term& a, const Term& b) {
    return compare_monomials(a, b) < 0;
  });
  Poly out;
  out.reserve(terms.size());
  for (Term& t : terms) {
    if (!out.empty() && compare_monomials(out.back(), t) == 0) {
      out.back().coeff = checked_add(out.back().coeff, t.coeff);
      if (out.back().coeff == 0) out.pop_back();
    } else if (t.coeff != 0) {
      out.push_back(std::move(t));
    }
  }
  check_term_count(out.size());
  return out;
}

// Both canonical, so one merge: no sort.
Poly poly_add(const Poly& a, const Poly& b) {
  charge_work(a.size() + b.size());
  Poly out;
  out.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    int c = compare_monomials(a[i], b[j]);
    if (c < 0) {
      out.push_back(a[i++]);
    } else if (c > 0) {
      out.push_back(b[j++]);
    } else {
      int64_t coeff = checked_add(a[i].coeff, b[j].coeff);
      if (coeff != 0) out.push_back({coeff, a[i].factors});
      ++i;
      ++j;
    }
  }
  out.insert(out.end(), a.begin() + i, a.end());
  out.insert(out.end(), b.begin() + j, b.end());
  check_term_count(out.size());
  return out;
}

Poly poly_mul(const Poly& a, const Poly& b) {
  check_term_count(a.size() * b.size());
  Poly all;
  all.reserve(a.size() * b.size());
  for (const Term& x : a) {
    for (const Term& y : b) {
      all.push_back({checked_mul(x.coeff, y.coeff),
                     multiply_factors(x.factors, y.factors)});
    }
  }
  return poly_sum(std::move(all));
}

// A non-zero factor keeps the monomials and their order: no sort.
Poly poly_scale(const Poly& a, int64_t factor) {
  if (factor == 0) return {};
  charge_work(a.size());
  Poly out = a;
  for (Term& t : out) t.coeff = checked_mul(t.coeff, factor);
  return out;
}

bool is_negation(const Expr& a, const Expr& b) {
  Poly sa, sb;
  const Poly& x = terms_of(a, &sa);
  const Poly& y = terms_of(b, &sb);
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i].coeff != -y[i].coeff ||
        x[i].factors.size() != y[i].factors.size()) {
      return false;
    }
    for (size_t k = 0; k < x[i].factors.size(); ++k) {
      const Factor &f = x[i].factors[k], &g = y[i].factors[k];
      if (f.power != g.power || f.atom != g.atom) return false;
    }
  }
  return true;
}

Expr linear_combination(int64_t ca, const Expr& a, int64_t cb, const Expr& b) {
  Poly sa, sb;
  return from_poly(poly_add(poly_scale(terms_of(a, &sa), ca),
                            poly_scale(terms_of(b, &sb), cb)));
}

}  // namespace fx::sym::internal
