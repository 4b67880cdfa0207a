// fx::best_time: how conv_choice.h and linear_choice.h time the kernels they
// choose between at plan build. One warm-up run (oneDNN's JIT, first-touch
// pages, the BLAS's buffers), then the best wall time of `runs` timed runs,
// each after `before_each` (untimed: conv_choice evicts the weights from
// the caches there).
#ifndef FX_CORE_COMPILE_BEST_TIME_H_
#define FX_CORE_COMPILE_BEST_TIME_H_

#include <algorithm>
#include <chrono>

namespace fx {

// The wall time of one run, in seconds.
template <typename Run>
double wall_time(Run run) {
  const auto start = std::chrono::steady_clock::now();
  run();
  const std::chrono::duration<double> took =
      std::chrono::steady_clock::now() - start;
  return took.count();
}

template <typename Run, typename Before>
double best_time(int runs, Run run, Before before_each) {
  run();
  double best = 1e300;
  for (int i = 0; i < runs; ++i) {
    before_each();
    best = std::min(best, wall_time(run));
  }
  return best;
}

template <typename Run>
double best_time(int runs, Run run) {
  return best_time(runs, run, [] {});
}

}  // namespace fx

#endif  // FX_CORE_COMPILE_BEST_TIME_H_
