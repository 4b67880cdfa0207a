// InferencePlan::Program: the kernels of some steps tried inside the network
// before the plan keeps one (OnednnStep::kernels; network_trial.h).
//
// conv_choice.h and linear_choice.h time each candidate kernel of an op
// alone, with its weights cold. Inside a network more differs: what the
// steps before left in the caches, the scratch of oneDNN's Winograd kernels
// (megabytes of transformed tiles) against the layers around it. On a
// 2-vCPU Intel Xeon, densenet121 at batch 1 ran 57 ms on oneDNN's first
// choices and 70 ms on the kernels timed fastest alone: Winograd on its 3x3
// layers at 28x28 timed level alone and took 2-3x the direct kernel's time
// in the network (BENCHMARKS.md, "Kernels tried in the network").
//
// So the binders build such steps with two kernels: kernel 0 the one timed
// fastest alone, kernel 1 another. A convolution whose kernel timed fastest
// alone is not oneDNN's first choice gets the first choice too
// (conv_choice.h, ConvTrial); a linear the timing put on oneDNN or
// PanelLinear gets the other of the two (linear_choice.h, LinearTrial).
// Once the program is planned it runs the planning inputs again: all such
// steps on kernel 0, then all on kernel 1, the order alternating from round
// to round so that a slow stretch of a shared machine slows both, each step
// timed. After a warm-up run of each, as many rounds as fit in
// kBudgetSeconds, within [kMinRounds, kMaxRounds].
//
// The steps of one group (OnednnStep::trial_group: the same op, shapes and
// fusions, one decision of the timing alone) are decided together, on the
// sum of their times in each run: a step's own time moves by 5-10% from
// run to run on a shared machine, as much as the kernels differ, and the
// encoder's 24 linears (four groups) decided one by one ended on a
// different mix in each build, 38-42 ms at batch 1 against 37 ms all on
// PanelLinear (BENCHMARKS.md). The network overturns the timing alone only
// where the group's median time on kernel 1 is at most kMargin of its time
// on kernel 0; elsewhere its steps keep kernel 0. A run that throws ends
// the trial: every step keeps kernel 0, the one the planning runs ran. The
// trial runs' results are dropped; the caller's inputs are only read (a
// plan never writes into its inputs).
#include <algorithm>
#include <chrono>
#include <map>

#include "fx_core/compile/inference_program.h"

namespace fx {
namespace {

constexpr double kBudgetSeconds = 1.0;
constexpr int kMinRounds = 2;
constexpr int kMaxRounds = 5;
constexpr double kMargin = 0.95;  // as the timing alone

int64_t median(std::vector<int64_t> ns) {
  std::sort(ns.begin(), ns.end());
  return ns[ns.size() / 2];
}

// The median over rounds of the `members`' summed times, where
// `times[j][r]` is the j-th tried step's time in round r.
int64_t group_median(const std::vector<std::vector<int64_t>>& times,
                     const std::vector<size_t>& members) {
  std::vector<int64_t> sums(times[members.front()].size(), 0);
  for (size_t j : members) {
    for (size_t r = 0; r < sums.size(); ++r) sums[r] += times[j][r];
  }
  return median(std::move(sums));
}

}  // namespace

void InferencePlan::Program::trial_kernels(
    const std::vector<c10::IValue>& inputs) {
  std::vector<size_t> tried;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].onednn && steps[i].onednn->kernels() > 1) tried.push_back(i);
  }
  if (tried.empty()) return;
  follow_shared_buffers();
  std::vector<int64_t> ns(steps.size(), 0);
  std::vector<std::vector<int64_t>> times[2];
  times[0].resize(tried.size());
  times[1].resize(tried.size());
  // One run with every tried step on `kernel`; its wall time in seconds.
  auto run_on = [&](int kernel) {
    for (size_t i : tried) steps[i].onednn->use_kernel(kernel);
    trial_ns = &ns;
    const auto start = std::chrono::steady_clock::now();
    execute(inputs, /*record=*/false);
    trial_ns = nullptr;
    const std::chrono::duration<double> took =
        std::chrono::steady_clock::now() - start;
    return took.count();
  };
  try {
    const double pair = run_on(0) + run_on(1);
    const int rounds = std::clamp(static_cast<int>(kBudgetSeconds / pair),
                                  kMinRounds, kMaxRounds);
    for (int round = 0; round < rounds; ++round) {
      for (int kernel : {round % 2, 1 - round % 2}) {
        run_on(kernel);
        for (size_t j = 0; j < tried.size(); ++j) {
          times[kernel][j].push_back(ns[tried[j]]);
        }
      }
    }
  } catch (const std::exception&) {
    trial_ns = nullptr;
    for (size_t i : tried) steps[i].onednn->keep_kernel(0);
    trial_steps = tried.size();
    return;
  }
  // The tried steps (indices into `tried`) of each group.
  std::map<const void*, std::vector<size_t>> groups;
  for (size_t j = 0; j < tried.size(); ++j) {
    groups[steps[tried[j]].onednn->trial_group()].push_back(j);
  }
  for (const auto& [group, members] : groups) {
    const bool moves =
        static_cast<double>(group_median(times[1], members)) <=
        kMargin * static_cast<double>(group_median(times[0], members));
    for (size_t j : members) steps[tried[j]].onednn->keep_kernel(moves ? 1 : 0);
    if (moves) trial_overturned += members.size();
  }
  trial_steps = tried.size();
  trial_groups = groups.size();
}

}  // namespace fx
