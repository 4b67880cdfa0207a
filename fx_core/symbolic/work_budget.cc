#include "fx_core/symbolic/work_budget.h"

#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx::sym {
namespace {

struct Budget {
  bool live = false;
  uint64_t limit = 0;
  uint64_t spent = 0;
};

Budget& this_thread_budget() {
  thread_local Budget budget;
  return budget;
}

}  // namespace

WorkBudget::WorkBudget(uint64_t limit) {
  Budget& b = this_thread_budget();
  armed_ = !b.live;
  if (armed_) b = Budget{true, limit, 0};
}

WorkBudget::~WorkBudget() {
  if (armed_) this_thread_budget() = Budget{};
}

uint64_t WorkBudget::spent() { return this_thread_budget().spent; }

namespace internal {

void charge_work(uint64_t units) {
  Budget& b = this_thread_budget();
  if (!b.live) return;
  b.spent += units;
  if (b.spent > b.limit) {
    throw FxError(cat("symbolic expression too costly to simplify: more than ",
                      b.limit, " term operations"));
  }
}

}  // namespace internal
}  // namespace fx::sym
