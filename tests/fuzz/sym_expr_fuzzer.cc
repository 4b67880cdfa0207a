// Fuzz target: the symbolic expression parser (fx::sym::parse_sym_expr and
// parse_sym_relation). Whatever parses prints text that parses again, and
// printing and parsing reach a fixed point within a few rounds (it is one
// round except where sympy itself builds a Mod unevaluated, which the
// parser, like sympy, simplifies when it reads it back).
//
// Reading back runs under a budget of kReadBackWork term operations for
// all rounds together, and a read-back refused for that cost alone ends the
// check: a few hundred bytes can print as megabytes (up to kMaxSize parts),
// and reading those back costs a few units a byte, linear but 20-30 s under
// the sanitizers, which starved the campaign. What the budget of the
// parser itself refuses is tested in sym_parser_test and work_budget_test.
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
constexpr uint64_t kReadBackWork = 300000;

bool refused_for_cost(const absl::Status& status) {
  return status.message().find("too costly to simplify") !=
         std::string_view::npos;
}

template <typename Parse>
void check_round_trip(std::string_view text, Parse parse) {
  auto parsed = parse(text);
  fx::fuzz::require_message(parsed.status());
  if (!parsed.ok()) return;
  std::string printed = parsed->str();
  if (printed == "True" || printed == "False") return;  // a decided relation
  fx::sym::WorkBudget read_back(kReadBackWork);
  for (int round = 0; round < kRounds; ++round) {
    auto again = parse(printed);
    if (!again.ok() && refused_for_cost(again.status())) return;
    fx::fuzz::require(again.ok(), "printed text does not parse");
    std::string next = again->str();
    if (next == printed) return;
    printed = next;
  }
  fx::fuzz::require(false, "printing and parsing do not reach a fixed point");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  check_round_trip(text, fx::sym::parse_sym_expr);
  check_round_trip(text, fx::sym::parse_sym_relation);
  return 0;
}
