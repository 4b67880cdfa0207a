// Fuzz target: the symbolic expression parser (fx::sym::parse_sym_expr and
// parse_sym_relation). Whatever parses prints text that parses again, and
// printing and parsing reach a fixed point (it is one round except where
// sympy itself builds a Mod unevaluated, which the parser, like sympy,
// simplifies when it reads it back, one level of nesting a reading; a
// relation may then be decided, True or False, as sympy decides it). After
// kRounds readings each must shorten the print, so the check ends.
//
// Work budgets (work_budget.h), far tighter than the parser's own:
//  - the first read of the input runs under kFirstReadWork term operations
//    instead of the parser's 1 million plus 16 a byte. A refusal for cost
//    is still checked to carry its message. Under ASan, UBSan and
//    libFuzzer's instrumentation a term operation costs about 30 us, 20
//    times the native cost, and the corpus drifts towards inputs that use
//    the whole allowance: at 200,000 units the campaign ran at 16-47
//    inputs a second, too slow for the 10 million executions a campaign
//    needs. At 2,000 (measured on run 9's 2,988-input corpus) replaying
//    the corpus takes 9 s instead of 241 s and reaches 2,100 of the 2,142
//    edges; the edges given up are the refusals of expansions past the
//    10,000-term limit and the simplification of sums of thousands of
//    terms, which sym_parser_test and work_budget_test cover, and which
//    earlier campaigns fuzzed at 200,000 (FUZZING.md);
//  - reading back runs under kReadBackWork for all rounds together, and a
//    read-back refused for that cost alone ends the check: a few hundred
//    bytes can print as megabytes (up to kMaxSize parts). Canonical text
//    reads back at about 3.4 units a byte, so every print up to about
//    2 KB is checked.
// What the parser's own budget refuses is tested in sym_parser_test and
// work_budget_test.
//
// A text is read as a relation only when it holds something a relation
// needs (a comparison operator, Eq or Ne): parse_sym_relation reads the
// whole left side before it finds no comparison, so every costly
// expression was simplified twice to learn only that.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fx_core/symbolic/sym_expr.h"
#include "fx_core/symbolic/sym_parser.h"
#include "fx_core/symbolic/sym_relation.h"
#include "fx_core/symbolic/work_budget.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

constexpr int kRounds = 4;
constexpr uint64_t kFirstReadWork = 2000;
constexpr uint64_t kReadBackWork = 8000;

bool refused_for_cost(const absl::Status& status) {
  return status.message().find("too costly to simplify") !=
         std::string_view::npos;
}

// Symbolic integers are int64, as SymInts are; sympy's are unbounded. A
// print may read back as a larger value: Mod(4*N2*(Mod(f, 5)), 5)**37 is
// 4**37*Mod(N2*f, 5)**37 once the Mod is rebuilt (as in sympy,
// SympyAgreement.AReadingBackPastInt64IsRefusedAsSympyGoesPastIt), and
// 4**37 is past INT64_MAX.
bool refused_for_range(const absl::Status& status) {
  return status.message().find("integer overflow in symbolic") !=
         std::string_view::npos;
}

// A Mod the first reading built unevaluated may be one that sympy cannot
// evaluate at all when rebuilt: Mod(3*g1 + 1, 2*g1 - 1) recurses in
// sympy 1.11's Mod.eval until Python's RecursionError; ours stops at its
// depth bound with an error (SympyAgreement.
// AModSympyCannotRebuildIsRefusedNotRecursedInto).
bool refused_for_depth(const absl::Status& status) {
  return status.message().find("nested too deeply to simplify") !=
         std::string_view::npos;
}

// `parse(text)` under a budget of *left units, which it lowers by what the
// parse spent.
template <typename Parse>
auto parse_within(std::string_view text, Parse parse, uint64_t* left) {
  fx::sym::WorkBudget budget(*left);
  auto parsed = parse(text);
  *left -= std::min(*left, fx::sym::WorkBudget::spent());
  return parsed;
}

template <typename Parse>
void check_round_trip(std::string_view text, Parse parse) {
  uint64_t first_read = kFirstReadWork;
  auto parsed = parse_within(text, parse, &first_read);
  fx::fuzz::require_message(parsed.status());
  if (!parsed.ok()) return;
  // Printing runs outside the budgets: a relation's str() decides it
  // (arithmetic that a live budget would charge, and refuse past its
  // limit with an FxError the budget's contract allows).
  std::string printed = parsed->str();
  if (printed == "True" || printed == "False") return;  // a decided relation
  uint64_t read_back = kReadBackWork;
  for (int round = 0;; ++round) {
    auto again = parse_within(printed, parse, &read_back);
    if (!again.ok() && (refused_for_cost(again.status()) ||
                        refused_for_range(again.status()) ||
                        refused_for_depth(again.status()))) {
      return;
    }
    fx::fuzz::require(again.ok(), "printed text does not parse");
    std::string next = again->str();
    if (next == printed) return;
    // Decided on reading back, as sympy decides it: a Mod the first
    // reading kept unevaluated simplifies when rebuilt from the text
    // (2*Mod(x, 5) - 2*Mod(Mod(x, 5), 245) is 0, so `... > y` is False).
    if (next == "True" || next == "False") return;
    // Past kRounds, each reading must shorten the print: sympy's own
    // reading back may remove one level of nesting a time, as many times as
    // there are levels (Mod(3*(Mod(3*(Mod(N, 14)), 8114)), 8) loses its
    // inner Mod(.., 8114) only when rebuilt; SympyAgreement.
    // EachReadingBackRemovesANestedModAsInSympy). A print that grows or
    // changes without shrinking never settles.
    fx::fuzz::require(round < kRounds || next.size() < printed.size(),
                      "printing and parsing do not reach a fixed point");
    printed = next;
  }
}

// Whether `text` holds a comparison operator or the name Eq or Ne.
bool may_be_relation(std::string_view text) {
  return text.find_first_of("=!<>") != std::string_view::npos ||
         text.find("Eq") != std::string_view::npos ||
         text.find("Ne") != std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  check_round_trip(text, fx::sym::parse_sym_expr);
  if (may_be_relation(text)) {
    check_round_trip(text, fx::sym::parse_sym_relation);
  }
  return 0;
}
