// Relation: sympy's sign reasoning on lhs - rhs (sym_division.cc) and
// printing.
#include "fx_core/symbolic/sym_relation.h"

#include "fx_core/support/strings.h"
#include "fx_core/symbolic/sym_node.h"

namespace fx::sym {
namespace {

using internal::is_nonnegative;
using internal::is_positive;
using internal::is_zero;

std::optional<bool> negate(std::optional<bool> b) {
  if (!b) return b;
  return !*b;
}

}  // namespace

std::optional<bool> Relation::decided() const {
  switch (op) {
    case Op::kEq:
      return is_zero(lhs - rhs);
    case Op::kNe:
      return negate(is_zero(lhs - rhs));
    case Op::kGt:
      return is_positive(lhs - rhs);
    case Op::kGe:
      return is_nonnegative(lhs - rhs);
    case Op::kLt:
      return is_positive(rhs - lhs);
    case Op::kLe:
      return is_nonnegative(rhs - lhs);
  }
  return std::nullopt;
}

std::string Relation::str() const {
  if (auto d = decided()) return *d ? "True" : "False";
  switch (op) {
    case Op::kEq:
      return cat("Eq(", lhs.str(), ", ", rhs.str(), ")");
    case Op::kNe:
      return cat("Ne(", lhs.str(), ", ", rhs.str(), ")");
    case Op::kLt:
      return cat(lhs.str(), " < ", rhs.str());
    case Op::kLe:
      return cat(lhs.str(), " <= ", rhs.str());
    case Op::kGt:
      return cat(lhs.str(), " > ", rhs.str());
    case Op::kGe:
      return cat(lhs.str(), " >= ", rhs.str());
  }
  return "";
}

bool Relation::evaluate(const Bindings& bindings) const {
  if (auto d = decided()) return *d;  // sympy's True / False
  return compare(bindings);
}

bool Relation::compare(const Bindings& bindings) const {
  int64_t a = lhs.evaluate(bindings);
  int64_t b = rhs.evaluate(bindings);
  switch (op) {
    case Op::kEq:
      return a == b;
    case Op::kNe:
      return a != b;
    case Op::kLt:
      return a < b;
    case Op::kLe:
      return a <= b;
    case Op::kGt:
      return a > b;
    case Op::kGe:
      return a >= b;
  }
  return false;
}

}  // namespace fx::sym
