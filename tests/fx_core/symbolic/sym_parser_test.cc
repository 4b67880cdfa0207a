// fx::sym's own behaviour (no sympy): parser errors (our messages), the
// depth bound, overflow and division by zero as errors, substitution,
// free symbols, evaluation errors.
#include "fx_core/symbolic/sym_parser.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "fx_core/support/error.h"
#include "fx_core/symbolic/sym_expr.h"
#include "fx_core/symbolic/sym_relation.h"
#include "fx_core/symbolic/work_budget.h"
#include "tests/testing/status_matchers.h"

namespace fx::sym {
namespace {

using testing::error_of;

std::string error_text(std::string_view text) {
  return error_of(parse_sym_expr(text));
}

Expr parsed(std::string_view text) {
  absl::StatusOr<Expr> e = parse_sym_expr(text);
  if (!e.ok()) throw FxError(std::string(e.status().message()));
  return *e;
}

TEST(SymParserTest, ErrorsNameTheOffsetAndWhatWasExpected) {
  EXPECT_EQ(error_text("FloorDiv(x, 2"),
            "at offset 13: expected ')' after the arguments of FloorDiv");
  EXPECT_EQ(error_text("Mod(x 2)"),
            "at offset 6: expected ',' between the arguments of Mod");
  EXPECT_EQ(error_text(""),
            "at offset 0: expected an integer, a symbol or '('");
  EXPECT_EQ(error_text("x +"),
            "at offset 3: expected an integer, a symbol or '('");
  EXPECT_EQ(error_text("(x"), "at offset 2: expected ')' to close '('");
  EXPECT_EQ(error_text("x y"), "at offset 2: expected an operator or the end");
  EXPECT_EQ(error_text("foo(1)"),
            "at offset 0: unknown function 'foo' (FloorDiv or Mod expected)");
  EXPECT_EQ(error_text("t0.size(x)"),
            "at offset 8: expected a dimension after size(");
  EXPECT_EQ(error_text("t0.shape"),
            "at offset 8: expected size(N), stride(N) or storage_offset() "
            "after '.'");
  EXPECT_EQ(error_text("x**y"),
            "at offset 1: expected a non-negative integer exponent after '**'");
  EXPECT_EQ(error_text("99999999999999999999"),
            "at offset 0: integer literal out of range");
  EXPECT_EQ(error_of(parse_sym_relation("x")),
            "at offset 1: expected a comparison (==, !=, <, <=, >, >=)");
  EXPECT_EQ(error_of(parse_sym_relation("Eq(x, 1")),
            "at offset 7: expected ')' after the arguments of Eq");
}

TEST(SymParserTest, ArithmeticErrorsAreParseErrorsAtTheOperator) {
  EXPECT_EQ(error_text("x // 0"),
            "at offset 2: symbolic integer division by zero");
  EXPECT_EQ(error_text("Mod(x, 0)"),
            "at offset 0: symbolic integer modulo by zero");
  EXPECT_EQ(error_text("9223372036854775807 + 1"),
            "at offset 20: integer overflow in symbolic addition");
  EXPECT_EQ(error_text("3037000500*3037000500"),
            "at offset 10: integer overflow in symbolic multiplication");
  EXPECT_EQ(error_text("2**63"),
            "at offset 1: integer overflow in symbolic multiplication");
  EXPECT_EQ(error_text("(a + b + c + d + e + f + g)**30"),
            "at offset 27: symbolic expression of more than 10000 terms");
  // A product whose expansion would pass through more than 10000 terms is
  // refused before it is formed (the fuzzer's input of sums multiplied
  // into a 10-second timeout: crashes/sym_expr/expanded_product_timeout).
  std::string product = "(a0 + b0)";
  for (int i = 1; i < 15; ++i) {
    product += " * (a" + std::to_string(i) + " + b" + std::to_string(i) + ")";
  }
  EXPECT_NE(error_text(product).find("symbolic expression of more than 10000 "
                                     "terms"),
            std::string::npos)
      << error_text(product);
}

TEST(SymParserTest, DeepNestingIsAnErrorNotACrash) {
  std::string deep(100000, '(');
  EXPECT_EQ(error_text(deep), "at offset 200: nesting deeper than 200");
  std::string minus(100000, '-');
  EXPECT_EQ(error_text(minus + "x"), "at offset 200: nesting deeper than 200");
  std::string calls;
  for (int i = 0; i < 1000; ++i) calls += "Mod(";
  EXPECT_EQ(error_text(calls), "at offset 800: nesting deeper than 200");
  std::string nested_ok;
  for (int i = 0; i < 150; ++i) nested_ok += "(";
  nested_ok += "x";
  for (int i = 0; i < 150; ++i) nested_ok += ")";
  EXPECT_EQ(error_text(nested_ok), "");
}

// Mod.eval's rules on sums of many terms, each checked against the same
// modulo reached another way. The rules once added the terms one at a time
// (crashes/sym_expr/mod_of_sum_timeout: a second for a 400-byte input).
TEST(SymParserTest, ModOfALongSumIsTheModOfTheMergedSum) {
  std::string merged = "Mod(Mod(x0, q)";
  std::string plain = "Mod(x0";
  std::string multiples = "Mod(y";
  for (int i = 1; i < 300; ++i) {
    const std::string x = "x" + std::to_string(i);
    merged += " + " + x;
    plain += " + " + x;
    multiples += " + " + std::to_string(i) + "*q*" + x;
  }
  merged += ", q)";
  plain += ", q)";
  multiples += ", q)";
  EXPECT_EQ(parsed(merged), parsed(plain));
  EXPECT_EQ(parsed(multiples), parsed("Mod(y, q)"));
}

// An expression's parts are counted as its text repeats them: FloorDiv(P,
// q) for a P of 8192 terms of 13 symbols each (114688 parts) is 114690
// parts, and a product of k of them 1 + 114690 k.
TEST(SymParserTest, PartsBeyondTheLimitAreRefused) {
  auto product = [](int k) {
    std::string text;
    for (int i = 0; i < k; ++i) {
      const std::string x = "x" + std::to_string(i) + "_";
      std::string p = "(" + x + "a0 + " + x + "b0)";
      for (int j = 1; j < 13; ++j) {
        p += "*(" + x + "a" + std::to_string(j) + " + " + x + "b" +
             std::to_string(j) + ")";
      }
      text += (i ? " * " : "") + std::string("FloorDiv(") + p + ", q)";
    }
    return text;
  };
  EXPECT_EQ(error_text(product(8)), "");  // 917521 parts
  EXPECT_NE(error_text(product(9))
                .find("symbolic expression of more than 1000000 parts"),
            std::string::npos)
      << error_text(product(9));
}

// Each name is one symbol however often it occurs, and an expression
// prints the same whichever occurrence made it.
TEST(SymParserTest, RepeatedNamesAreOneSymbol) {
  Expr e = parsed("s0*s1 + s1*s0 + s0.size(0) - s0.size(0) + s0");
  EXPECT_EQ(e, Expr::integer(2) * Expr::symbol("s0") * Expr::symbol("s1") +
                   Expr::symbol("s0"));
  EXPECT_EQ(e.str(), "2*s0*s1 + s0");
}

TEST(SymParserTest, PythonOperatorsAndSymbolForms) {
  EXPECT_EQ(parsed("t0.size(1) // 2"),
            floordiv(Expr::symbol("t0.size(1)"), Expr::integer(2)));
  EXPECT_EQ(parsed("t0.size(1) % 2"),
            mod(Expr::symbol("t0.size(1)"), Expr::integer(2)));
  EXPECT_EQ(parsed("-(s0 - 3)"), Expr::integer(3) - Expr::symbol("s0"));
  EXPECT_EQ(parsed("t0.stride(0) * t0.storage_offset()"),
            Expr::symbol("t0.stride(0)") * Expr::symbol("t0.storage_offset()"));
  EXPECT_EQ(parsed("2*3 % 4 // 1"), Expr::integer(2));
  EXPECT_EQ(parsed("-x**2"), -pow(Expr::symbol("x"), 2));
  EXPECT_EQ(parsed("7 // -2").as_integer(), -4);
  EXPECT_EQ(parsed("-7 % 3").as_integer(), 2);
  EXPECT_EQ(parsed("7 % -3").as_integer(), -2);
}

TEST(SymExprTest, IntegerRangeIsSymmetric) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_THROW(Expr::integer(std::numeric_limits<int64_t>::min()), FxError);
  EXPECT_EQ((-Expr::integer(kMax)).as_integer(), -kMax);
  EXPECT_THROW(Expr::integer(-kMax) - Expr::integer(1), FxError);
  EXPECT_EQ(parsed(std::to_string(-kMax)).str(), std::to_string(-kMax));
}

TEST(SymExprTest, EvaluateErrors) {
  Expr x = Expr::symbol("t0.size(0)");
  try {
    (x + Expr::integer(1)).evaluate({});
    FAIL() << "no error";
  } catch (const FxError& e) {
    EXPECT_STREQ(e.what(), "no value for the symbol t0.size(0)");
  }
  Bindings zero{{"t0.size(0)", 0}};
  EXPECT_THROW(floordiv(Expr::integer(5), x).evaluate(zero), FxError);
  EXPECT_THROW(mod(Expr::integer(5), x).evaluate(zero), FxError);
  Bindings big{{"t0.size(0)", int64_t{1} << 40}};
  EXPECT_THROW(pow(x, 2).evaluate(big), FxError);
  EXPECT_EQ(floordiv(Expr::integer(-7), x).evaluate({{"t0.size(0)", 2}}), -4);
}

TEST(SymExprTest, SubstituteAndFreeSymbols) {
  Expr e = parsed("FloorDiv(t0.size(1), 2) + t0.size(0)*t1.size(0)");
  EXPECT_EQ(e.free_symbols(), (std::vector<std::string>{
                                  "t0.size(0)", "t0.size(1)", "t1.size(0)"}));
  Expr s = e.substitute({{"t0.size(1)", parsed("2*t1.size(0)")},
                         {"t0.size(0)", Expr::integer(3)}});
  EXPECT_EQ(s, parsed("4*t1.size(0)"));
  EXPECT_EQ(s.evaluate({{"t1.size(0)", 5}}), 20);
}

TEST(SymRelationTest, EvaluateAndParse) {
  absl::StatusOr<Relation> r = parse_sym_relation("t0.size(0) >= 2");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->op, Relation::Op::kGe);
  EXPECT_TRUE(r->evaluate({{"t0.size(0)", 2}}));
  EXPECT_FALSE(r->evaluate({{"t0.size(0)", 1}}));
  absl::StatusOr<Relation> ne = parse_sym_relation("x != y");
  ASSERT_TRUE(ne.ok());
  EXPECT_EQ(ne->op, Relation::Op::kNe);
}

// Mod of a 3600-term sum by a sum of n symbols reduces each term by the
// divisor: n * 3600 steps from a text of a few hundred bytes plus 7n.
std::string mod_by_sum(int n) {
  auto sum = [](const std::string& x, int k, const std::string& extra) {
    std::string s = "(";
    for (int i = 0; i < k; ++i) s += (i ? " + " : "") + x + std::to_string(i);
    return s + extra + ")";
  };
  return "Mod(" + sum("a", 60, "") + "*" + sum("b", 60, "") + ", " +
         sum("c", n, " + 1") + ")";
}

TEST(SymParserTest, SimplificationBeyondTheWorkBudgetIsRefused) {
  EXPECT_EQ(error_text(mod_by_sum(10)), "");   // about 400000 units
  const std::string costly = mod_by_sum(200);  // about 5900000 units
  ASSERT_LT(parse_work_limit(costly.size()), 5000000u);
  EXPECT_NE(
      error_text(costly).find(
          "symbolic expression too costly to simplify: more than " +
          std::to_string(parse_work_limit(costly.size())) + " term operations"),
      std::string::npos)
      << error_text(costly);
  // A caller's own budget covers the parse instead.
  WorkBudget generous(10000000);
  EXPECT_EQ(error_text(costly), "");
  EXPECT_GT(WorkBudget::spent(), 5000000u);
}

// The budget can run out in any step that makes a node, not only in the
// arithmetic: a literal made when nothing is left (small integers are
// shared, a large one is a new node) is a refusal at the offset reached,
// never an exception out of the parser (the sym_expr campaign's
// crashes/sym_expr/budget_spent_on_a_literal aborted there).
TEST(SymParserTest, ABudgetSpentOnALiteralIsAnError) {
  const std::string refused =
      "symbolic expression too costly to simplify: more than 0 term "
      "operations";
  WorkBudget spent(0);
  EXPECT_EQ(error_text("123456789"), "at offset 9: " + refused);
  absl::StatusOr<Relation> r = parse_sym_relation("s0 < 123456789");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "at offset 14: " + refused);
}

}  // namespace
}  // namespace fx::sym
