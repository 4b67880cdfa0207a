#include "host/pipeline/pipeline_report.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "fx_core/support/strings.h"

namespace fx::host {
namespace {

const char* outcome_name(PassRecord::Outcome outcome) {
  switch (outcome) {
    case PassRecord::Outcome::kRan:
      return "ran";
    case PassRecord::Outcome::kRolledBack:
      return "rolled back";
    case PassRecord::Outcome::kNotRun:
      return "not run";
  }
  return "";
}

}  // namespace

std::vector<std::string> PipelineReport::warnings() const {
  std::vector<std::string> out;
  for (const PassRecord& r : passes) {
    if (!r.warning.empty())
      out.push_back(cat("pass '", r.pass, "': ", r.warning));
  }
  return out;
}

bool PipelineReport::changed() const {
  for (const PassRecord& r : passes) {
    if (r.changed) return true;
  }
  return false;
}

std::string PipelineReport::summary() const {
  std::string out;
  size_t width = 4;
  for (const PassRecord& r : passes) width = std::max(width, r.pass.size());
  append(&out,
         absl::StrFormat("%-*s  %-11s %10s %10s  %s\n", static_cast<int>(width),
                         "pass", "outcome", "run ms", "verify ms", "changed"));
  for (const PassRecord& r : passes) {
    append(&out, absl::StrFormat("%-*s  %-11s %10.3f %10.3f  %s\n",
                                 static_cast<int>(width), r.pass,
                                 outcome_name(r.outcome), r.run_seconds * 1e3,
                                 r.verify_seconds * 1e3,
                                 r.outcome == PassRecord::Outcome::kRan
                                     ? (r.changed ? "yes" : "no")
                                     : "-"));
    if (!r.error.empty()) append(&out, "    ", r.error, "\n");
    if (!r.warning.empty()) append(&out, "    warning: ", r.warning, "\n");
  }
  return out;
}

}  // namespace fx::host
