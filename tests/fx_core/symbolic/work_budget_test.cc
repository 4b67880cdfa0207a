// fx::sym::WorkBudget: what a live budget counts and refuses, how scopes
// nest, and that arithmetic outside any budget is never refused.
#include "fx_core/symbolic/work_budget.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "fx_core/support/error.h"
#include "fx_core/symbolic/sym_expr.h"

namespace fx::sym {
namespace {

// (x0 + ... + x{n-1})**2: n*n products merged into n*(n+1)/2 terms.
Expr square_of_sum(int n) {
  std::vector<Expr> xs;
  for (int i = 0; i < n; ++i)
    xs.push_back(Expr::symbol("x" + std::to_string(i)));
  Expr s = sum(xs);
  return s * s;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const FxError& e) {
    return e.what();
  }
  return "";
}

TEST(WorkBudgetTest, CountsTermsAndRefusesPastTheLimit) {
  WorkBudget budget(1000);
  EXPECT_EQ(WorkBudget::spent(), 0u);
  square_of_sum(10);  // 100 products sorted, 55 terms
  EXPECT_GE(WorkBudget::spent(), 100u);
  EXPECT_LT(WorkBudget::spent(), 1000u);
  EXPECT_EQ(error_of([] { square_of_sum(40); }),
            "symbolic expression too costly to simplify: more than 1000 term "
            "operations");
}

TEST(WorkBudgetTest, AnInnerScopeLeavesTheOuterBudgetCounting) {
  WorkBudget outer(100000);
  square_of_sum(10);
  const uint64_t before = WorkBudget::spent();
  {
    WorkBudget inner(1);  // not armed: the outer budget is live
    square_of_sum(10);
    EXPECT_GT(WorkBudget::spent(), before);
  }
  EXPECT_GT(WorkBudget::spent(), before);
}

TEST(WorkBudgetTest, NothingIsCountedOrRefusedWithoutALiveBudget) {
  { WorkBudget spent_then_gone(10); }
  EXPECT_EQ(error_of([] { square_of_sum(60); }), "");
  EXPECT_EQ(WorkBudget::spent(), 0u);
}

}  // namespace
}  // namespace fx::sym
