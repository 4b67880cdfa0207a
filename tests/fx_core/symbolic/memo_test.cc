// The memos symbolic capture leans on: ExprMemo gives what the operators
// give, and GuardRecorder decides a relation met again by identity or by
// structure alike, recording its guard once.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fx_core/support/error.h"
#include "fx_core/symbolic/expr_memo.h"
#include "fx_core/symbolic/guard_recorder.h"
#include "fx_core/symbolic/sym_expr.h"
#include "fx_core/symbolic/sym_parser.h"

namespace fx::sym {
namespace {

Expr parse(const std::string& text) {
  absl::StatusOr<Expr> e = parse_sym_expr(text);
  EXPECT_TRUE(e.ok()) << e.status();
  return *e;
}

TEST(ExprMemo, GivesWhatTheOperatorsGiveAndTheSameNodeOnRepeat) {
  using Op = ExprMemo::Op;
  ExprMemo memo;
  const std::vector<Expr> operands = {parse("s0"), parse("2*s0 + s1"),
                                      parse("FloorDiv(s1, 4)"), parse("3"),
                                      parse("-5")};
  for (const Expr& a : operands) {
    for (const Expr& b : operands) {
      EXPECT_EQ(memo.apply(Op::kAdd, a, b), a + b);
      EXPECT_EQ(memo.apply(Op::kSub, a, b), a - b);
      EXPECT_EQ(memo.apply(Op::kMul, a, b), a * b);
      EXPECT_EQ(memo.apply(Op::kFloorDiv, a, b), floordiv(a, b));
      EXPECT_EQ(memo.apply(Op::kMod, a, b), mod(a, b));
      Expr first = memo.apply(Op::kMul, a, b);
      EXPECT_EQ(&memo.apply(Op::kMul, a, b).node(), &first.node());
    }
  }
  // Structurally equal operands of other nodes are computed again, equal.
  Expr x = parse("2*s0 + s1"), y = parse("2*s0 + s1");
  ASSERT_NE(&x.node(), &y.node());
  EXPECT_EQ(memo.apply(Op::kMul, x, x), memo.apply(Op::kMul, y, y));
}

TEST(ExprMemo, AnErrorIsThrownEachTimeAndNothingIsKept) {
  ExprMemo memo;
  Expr s = parse("s0"), zero = parse("0");
  EXPECT_THROW(memo.apply(ExprMemo::Op::kFloorDiv, s, zero), FxError);
  EXPECT_THROW(memo.apply(ExprMemo::Op::kFloorDiv, s, zero), FxError);
  EXPECT_THROW(memo.apply(ExprMemo::Op::kMod, s, zero), FxError);
}

TEST(GuardRecorder, ARelationMetAgainByIdentityOrStructureRecordsOnce) {
  GuardRecorder guards({{"s0", 8}, {"s1", 3}});
  Expr a = parse("s0"), b = parse("2*s1");
  Relation lt{Relation::Op::kLt, a, b};
  EXPECT_FALSE(guards.decide(lt));
  EXPECT_FALSE(guards.decide(lt));  // the same nodes
  Relation again{Relation::Op::kLt, parse("s0"), parse("2*s1")};
  EXPECT_FALSE(guards.decide(again));  // other nodes, same structure
  ASSERT_EQ(guards.guards().size(), 1u);
  EXPECT_EQ(guards.guards()[0].str(), "s0 >= 2*s1");
  // value() answers without recording; another op on the same nodes is
  // another relation.
  EXPECT_TRUE(guards.value({Relation::Op::kGt, a, b}));
  EXPECT_EQ(guards.guards().size(), 1u);
  EXPECT_TRUE(guards.decide({Relation::Op::kNe, a, b}));
  ASSERT_EQ(guards.guards().size(), 2u);
  EXPECT_EQ(guards.guards()[1].str(), "Ne(s0, 2*s1)");
}

}  // namespace
}  // namespace fx::sym
