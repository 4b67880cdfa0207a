// fx::sym::WorkBudget: a bound on the simplification work that symbolic
// arithmetic does on one thread, for expressions read from untrusted text.
//
// Contract:
//  - The size limits of sym_expr.h (kMaxTerms, kMaxSize) bound each result,
//    not the work of reaching it: a few hundred bytes of nested Mods of
//    products of sums can make millions of intermediate terms (seconds of
//    CPU for one expression). While a WorkBudget is alive, every term that
//    polynomial arithmetic makes, merges or copies, and every expression
//    node made, costs one unit; the unit past the limit throws FxError
//    ("symbolic expression too costly to simplify: ...").
//  - Scopes nest: one made while another is alive on the same thread
//    changes nothing, so a reader that arms a budget for a whole file
//    bounds all of its expressions together.
//  - Without a live budget nothing is counted or refused: the arithmetic of
//    a program being traced is the user's own.
//  - parse_sym_expr and parse_sym_relation arm parse_work_limit(text) for
//    each text: a fixed allowance plus a linear one per byte, so reading
//    sympy's output costs time in proportion to its length and a short text
//    costs at most about the fixed part (1 million units, about 0.2 s
//    without sanitizers). Measured: the largest legal
//    expansions (10000 terms) cost under 20000 units from their 100-byte
//    factored form; reading printed canonical text back costs at most 3.5
//    units a byte (measured on prints of nested Mods up to 3 MB).
#ifndef FX_CORE_SYMBOLIC_WORK_BUDGET_H_
#define FX_CORE_SYMBOLIC_WORK_BUDGET_H_

#include <cstdint>

namespace fx::sym {

inline constexpr uint64_t kParseWorkBase = 1000000;
inline constexpr uint64_t kParseWorkPerByte = 16;
inline uint64_t parse_work_limit(uint64_t text_bytes) {
  return kParseWorkBase + kParseWorkPerByte * text_bytes;
}

class WorkBudget {
 public:
  explicit WorkBudget(uint64_t limit);
  ~WorkBudget();
  WorkBudget(const WorkBudget&) = delete;
  WorkBudget& operator=(const WorkBudget&) = delete;

  // The units spent so far under the live budget (0 when none is live).
  static uint64_t spent();

 private:
  bool armed_;
};

namespace internal {
// Spends `units` of the live budget, if any; FxError past its limit.
void charge_work(uint64_t units);
}  // namespace internal

}  // namespace fx::sym

#endif  // FX_CORE_SYMBOLIC_WORK_BUDGET_H_
