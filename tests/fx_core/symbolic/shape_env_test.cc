// fx::sym::ShapeEnv: binding symbols from real shapes and the errors that
// name the placeholder, the dimension and the guard (our messages; the
// guards torch 1.13 records are checked against torch itself in
// tests/python/symbolic_test.py).
#include "fx_core/symbolic/shape_env.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "fx_core/support/error.h"
#include "fx_core/symbolic/sym_parser.h"
#include "tests/testing/status_matchers.h"

namespace fx::sym {
namespace {

using testing::error_of;

Expr e(std::string_view text) {
  absl::StatusOr<Expr> parsed = parse_sym_expr(text);
  if (!parsed.ok()) throw FxError(std::string(parsed.status().message()));
  return *parsed;
}

Relation r(std::string_view text) {
  absl::StatusOr<Relation> parsed = parse_sym_relation(text);
  if (!parsed.ok()) throw FxError(std::string(parsed.status().message()));
  return *parsed;
}

// x_1: [t0.size(0), t0.size(1)] contiguous; y_1: [t0.size(0), 3] (duck
// sized with x_1's first dimension, second specialised); one guard.
ShapeEnv view_env() {
  ShapeEnv env;
  env.add_input("x_1", {e("t0.size(0)"), e("t0.size(1)")},
                {e("t0.size(1)"), Expr::integer(1)});
  env.add_input("y_1", {e("t0.size(0)"), Expr::integer(3)});
  env.set_hint("t0.size(0)", 4);
  env.set_hint("t0.size(1)", 6);
  env.add_guard(r("Eq(t0.size(0)*(Mod(t0.size(1), 2)), 0)"));
  return env;
}

ShapeEnv::ShapeOf shapes(std::map<std::string, TensorShape> all) {
  return [all](const std::string& name) -> std::optional<TensorShape> {
    auto it = all.find(name);
    if (it == all.end()) return std::nullopt;
    return it->second;
  };
}

TensorShape contiguous(std::vector<int64_t> sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;)
    strides[d - 1] = strides[d] * sizes[d];
  return {sizes, strides};
}

TEST(ShapeEnvTest, BindsEverySymbolFromItsSource) {
  ShapeEnv env = view_env();
  absl::StatusOr<Bindings> b = env.bind(
      shapes({{"x_1", contiguous({5, 8})}, {"y_1", contiguous({5, 3})}}));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->at("t0.size(0)"), 5);
  EXPECT_EQ(b->at("t0.size(1)"), 8);
  EXPECT_EQ(env.symbols(),
            (std::vector<std::string>{"t0.size(0)", "t0.size(1)"}));
  EXPECT_EQ(env.source("t0.size(1)")->str(), "placeholder 'x_1' dimension 1");
  EXPECT_EQ(env.hint("t0.size(1)"), 6);
  EXPECT_EQ(env.format_guards(), " - Eq(t0.size(0)*(Mod(t0.size(1), 2)), 0)");
}

TEST(ShapeEnvTest, ABrokenGuardNamesItAndTheValuesOfItsSymbols) {
  EXPECT_EQ(error_of(view_env().bind(shapes(
                {{"x_1", contiguous({5, 7})}, {"y_1", contiguous({5, 3})}}))),
            "the guard Eq(t0.size(0)*(Mod(t0.size(1), 2)), 0) does not hold: "
            "t0.size(0) = 5 (placeholder 'x_1' dimension 0), t0.size(1) = 7 "
            "(placeholder 'x_1' dimension 1)");
}

TEST(ShapeEnvTest, RankSpecialisationDuckSizingAndStridesAreChecked) {
  ShapeEnv env = view_env();
  EXPECT_EQ(error_of(env.bind(shapes({{"x_1", contiguous({5, 8, 1})},
                                      {"y_1", contiguous({5, 3})}}))),
            "placeholder 'x_1' has 3 dimensions, but the graph was captured "
            "for 2 ([t0.size(0), t0.size(1)])");
  EXPECT_EQ(error_of(env.bind(shapes(
                {{"x_1", contiguous({5, 8})}, {"y_1", contiguous({5, 4})}}))),
            "placeholder 'y_1' dimension 1 is 4, but the graph was captured "
            "for 3 only (specialised)");
  EXPECT_EQ(error_of(env.bind(shapes(
                {{"x_1", contiguous({5, 8})}, {"y_1", contiguous({6, 3})}}))),
            "placeholder 'y_1' dimension 0 is 6, but the graph needs "
            "t0.size(0) = 5 there (t0.size(0) = 5 (placeholder 'x_1' "
            "dimension 0))");
  EXPECT_EQ(error_of(env.bind(shapes({{"x_1", TensorShape{{5, 8}, {1, 5}}},
                                      {"y_1", contiguous({5, 3})}}))),
            "placeholder 'x_1' stride 1 is 5, but the graph was captured for "
            "1 only (specialised)");
  EXPECT_EQ(error_of(env.bind(shapes(
                {{"x_1", contiguous({1, 8})}, {"y_1", contiguous({1, 3})}}))),
            "placeholder 'x_1' dimension 0 is 1, but the graph was captured "
            "with a value that varies there (t0.size(0)), which excludes 0 "
            "and 1: the capture specialises 0 and 1 (as torch 1.13 does); "
            "capture again with this shape");
  EXPECT_EQ(error_of(env.bind(shapes({{"x_1", contiguous({5, 8})}}))),
            "placeholder 'y_1' must be a tensor of 2 dimensions ([t0.size(0), "
            "3])");
}

TEST(ShapeEnvTest, DeclaredEnvironmentsParseTheirTextOrNameIt) {
  absl::StatusOr<ShapeEnv> env = declared_shape_env(
      {{"t0.size(0)", 4}}, {"Ne(t0.size(0), 2)", "t0.size(0) > 2"});
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->guards().size(), 2u);
  EXPECT_EQ(error_of(declared_shape_env({}, {"t0.size(0) >"})),
            "shape_env guard [0] \"t0.size(0) >\": at offset 12: expected an "
            "integer, a symbol or '('");
  EXPECT_EQ(error_of(declared_shape_env({{"2*s0", 1}}, {})),
            "shape_env hint '2*s0' does not name a symbol");
  // sympy decides relations its assumptions settle: a true one is no guard.
  env = declared_shape_env({}, {"t0.size(0) > 0"});
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_TRUE(env->guards().empty());
}

// A guard keeps the text the capture printed it as (torch 1.13's
// format_guards() line) beside the relation it checks.
TEST(ShapeEnvTest, GuardsKeepTheTextTheCapturePrinted) {
  absl::StatusOr<ShapeEnv> env = declared_shape_env(
      {{"t0.size(0)", 4}}, {"Ne(t0.size(0), 2)", "t0.size(0) > 2"},
      {"Not(Eq(t0.size(0)/2, 1))", "t0.size(0)/2 > 1"});
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->guard_text(0), "Not(Eq(t0.size(0)/2, 1))");
  EXPECT_EQ(env->guards()[0].str(), "Ne(t0.size(0), 2)");
  EXPECT_EQ(env->format_guards(),
            " - Not(Eq(t0.size(0)/2, 1))\n - t0.size(0)/2 > 1");
  ShapeEnv plain;
  plain.add_guard(r("t0.size(0) > 2"));
  plain.add_guard(r("t0.size(0) > 2"));  // the same guard again: dropped
  plain.add_guard(r("t0.size(0) > 2"), "t0.size(0)/2 > 1");  // kept
  EXPECT_EQ(plain.format_guards(), " - t0.size(0) > 2\n - t0.size(0)/2 > 1");
  EXPECT_EQ(error_of(declared_shape_env({}, {"t0.size(0) > 2"}, {"a", "b"})),
            "shape_env has 1 guards but 2 printed texts");
}

TEST(ShapeEnvTest, AGuardThatCannotBeComputedIsAnErrorNotACrash) {
  ShapeEnv env;
  env.add_input("x", {e("s0"), e("s1")});
  env.add_guard(r("Eq(FloorDiv(s0, s1 - 2), 1)"));
  EXPECT_EQ(error_of(env.bind(shapes({{"x", contiguous({4, 2})}}))),
            "the guard Eq(FloorDiv(s0, s1 - 2), 1) cannot be evaluated (s0 = "
            "4 (placeholder 'x' dimension 0), s1 = 2 (placeholder 'x' "
            "dimension 1)): symbolic integer division by zero");
}

}  // namespace
}  // namespace fx::sym
