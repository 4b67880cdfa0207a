// Text to fx::sym::Expr / Relation: what Expr::str() and Relation::str()
// print, plus Python's `//` and `%`, parentheses and unary minus.
//
// Contract:
//  - Grammar (Python's precedence): sum of products; `*`, `//`, `%` left to
//    right; unary `-` / `+`; `**` with a non-negative integer exponent;
//    integers; FloorDiv(a, b), Mod(a, b); symbols: an identifier optionally
//    followed by `.size(N)`, `.stride(N)` or `.storage_offset()`. Relations:
//    Eq(a, b), Ne(a, b), a == b, a != b, a < b, a <= b, a > b, a >= b.
//  - The result is simplified as the operators of sym_expr.h simplify, so
//    str(parse(s)) == s for every s sympy prints.
//  - Errors (InvalidArgument) name the byte offset and what was expected:
//    "at offset 7: expected ')' after the arguments of FloorDiv". Overflow,
//    division by zero and nesting deeper than kMaxParseDepth are errors too.
//    No input crashes or exhausts the stack, and none costs more than
//    parse_work_limit(its length) units of simplification (work_budget.h)
//    unless the caller armed a budget of its own.
#ifndef FX_CORE_SYMBOLIC_SYM_PARSER_H_
#define FX_CORE_SYMBOLIC_SYM_PARSER_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "fx_core/symbolic/sym_expr.h"
#include "fx_core/symbolic/sym_relation.h"
#include "fx_core/symbolic/work_budget.h"

namespace fx::sym {

// The deepest nesting of parentheses, calls, unary operators and powers.
inline constexpr int kMaxParseDepth = 200;

absl::StatusOr<Expr> parse_sym_expr(std::string_view text);
absl::StatusOr<Relation> parse_sym_relation(std::string_view text);

}  // namespace fx::sym

#endif  // FX_CORE_SYMBOLIC_SYM_PARSER_H_
