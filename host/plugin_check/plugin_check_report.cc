// fx plugin-check's report: whether every check passed, and its table.
#include <algorithm>
#include <sstream>
#include <string>
#include <string_view>

#include "host/plugin_check/plugin_check.h"

namespace fx::host {
namespace {

std::string_view outcome_word(CheckOutcome outcome) {
  switch (outcome) {
    case CheckOutcome::kOk:
      return "ok";
    case CheckOutcome::kFail:
      return "FAIL";
    case CheckOutcome::kSkip:
      return "skip";
  }
  return "?";
}

}  // namespace

bool PluginCheckReport::ok() const {
  if (!load_failure.empty()) return false;
  for (const PassCheckRow& row : rows) {
    for (const CheckResult& r : row.results) {
      if (r.outcome == CheckOutcome::kFail) return false;
    }
  }
  return true;
}

std::string PluginCheckReport::table() const {
  size_t width = load_failure.empty() ? 4 : 8;
  for (const PassCheckRow& row : rows) width = std::max(width, row.pass.size());
  std::ostringstream out;
  auto pad = [](std::string_view s, size_t n) {
    return std::string(s) + std::string(n > s.size() ? n - s.size() : 0, ' ');
  };
  out << pad("pass", width) << "  " << pad("check", 13) << "  result\n";
  if (!load_failure.empty()) {
    out << pad("(plugin)", width) << "  " << pad("loads", 13) << "  "
        << pad(outcome_word(CheckOutcome::kFail), 4) << "  "
        << std::string_view(load_failure).substr(0, load_failure.find('\n'))
        << "\n";
  }
  for (const PassCheckRow& row : rows) {
    for (size_t c = 0; c < row.results.size(); ++c) {
      const CheckResult& r = row.results[c];
      out << pad(row.pass, width) << "  " << pad(kPluginChecks[c], 13) << "  "
          << pad(outcome_word(r.outcome), 4);
      // One line per check: a multi-line reason (lint's) keeps its first.
      if (!r.reason.empty()) {
        out << "  "
            << std::string_view(r.reason).substr(0, r.reason.find('\n'));
      }
      out << "\n";
    }
  }
  return out.str();
}

}  // namespace fx::host
