// InferencePlan::Program: the profile FX_PLAN_PROFILE asks for. Each call
// step's wall time is added to its record on every run (not the planning
// runs); when the program goes, stderr gets one table: the steps by total
// time, with what ran them, then the totals per engine. Times include
// everything a step does (re-pointing operands, allocating a fresh result,
// a fallback's registry call), so the column sums to the runs' time but the
// output step's and the bookkeeping between steps.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "fx_core/compile/inference_program.h"
#include "fx_core/runtime/value.h"

namespace fx {

bool plan_profiling_requested() {
  const char* v = std::getenv("FX_PLAN_PROFILE");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

void InferencePlan::Program::StepTime::add(int64_t t) {
  if (ns.size() < kSamples) ns.push_back(t);
  total_ns += t;
  ++calls;
}

InferencePlan::Program::~Program() {
  if (profiling && profiled_runs > 0) print_profile(std::cerr);
}

// What ran the step in its last run: oneDNN, the BLAS, PanelLinear, a fused
// pointwise kernel, another direct kernel, or the registry's kernel.
std::string InferencePlan::Program::engine(const Step& step) const {
  if (step.forwards >= 0) return "forwarded";
  if (step.onednn) return step.onednn->engine();
  if (step.pointwise && step.direct) return "pointwise";
  if (step.direct) return "direct";
  return "registry";
}

namespace {

// "1x3x224x224 torch.float32", "-" for a value that is no tensor.
std::string meta_text(const TensorMeta& m) {
  if (!m.is_tensor) return "-";
  std::ostringstream s;
  for (size_t d = 0; d < m.sizes.size(); ++d) {
    s << (d > 0 ? "x" : "") << m.sizes[d];
  }
  s << " " << dtype_name(m.dtype);
  return s.str();
}

std::string inputs_text(const std::vector<TensorMeta>& inputs) {
  std::string text;
  for (const TensorMeta& m : inputs) {
    text += (text.empty() ? "" : ", ") + meta_text(m);
  }
  return text;
}

}  // namespace

// The step's result as recorded; a 1x1 convolution computing the
// depthwise one after it too: that one's, and its node.
std::string InferencePlan::Program::result_text(const Step& step) const {
  if (step.slot < 0) return "-";
  const std::string text = meta_text(slot_meta[step.result_slot()]);
  if (step.fuses < 0) return text;
  return text + " (with " + std::string(steps[step.fuses].node->name()) + ")";
}

// One line a step, slowest median first: its median and minimum (over the
// first StepTime::kSamples runs), its share of the sum of medians (a
// typical run; on a loaded machine the means also count the time other
// processes took), and its mean over all runs.
void InferencePlan::Program::print_profile(std::ostream& out) const {
  struct Line {
    size_t step;
    int64_t median, min;
  };
  std::vector<Line> lines;
  int64_t typical = 0, total = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    std::vector<int64_t> ns = step_times[i].ns;
    if (ns.empty()) continue;
    std::sort(ns.begin(), ns.end());
    lines.push_back({i, ns[ns.size() / 2], ns.front()});
    typical += lines.back().median;
    total += step_times[i].total_ns;
  }
  std::stable_sort(
      lines.begin(), lines.end(),
      [](const Line& a, const Line& b) { return a.median > b.median; });
  const double share = typical > 0 ? 100.0 / static_cast<double>(typical) : 0;
  out << "fx plan profile: " << profiled_runs << " runs on "
      << inputs_text(input_meta) << "; call steps: median run " << std::fixed
      << std::setprecision(3) << typical / 1e6 << " ms, mean run "
      << total / 1e6 / static_cast<double>(profiled_runs) << " ms\n"
      << "  median us   share    min us   mean us  engine     node (target) -> "
         "result\n";
  std::map<std::string, int64_t> by_engine;
  for (const Line& l : lines) {
    const StepTime& t = step_times[l.step];
    const Step& step = steps[l.step];
    const std::string how = engine(step);
    by_engine[how] += l.median;
    out << std::setprecision(1) << std::setw(11) << l.median / 1e3
        << std::setw(7) << l.median * share << "%" << std::setw(10)
        << l.min / 1e3 << std::setw(10)
        << t.total_ns / 1e3 / static_cast<double>(t.calls) << "  " << std::left
        << std::setw(10) << how << std::right << " " << step.node->name()
        << " (" << step.node->target() << ") -> " << result_text(step) << "\n";
  }
  out << "  by engine (medians):";
  for (const auto& [how, ns] : by_engine) {
    out << " " << how << " " << std::setprecision(1) << ns * share << "%";
  }
  out << "\n";
}

}  // namespace fx
