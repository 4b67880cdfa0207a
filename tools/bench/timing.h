// Timing for the benchmark binaries: the median of repeated runs.
#ifndef TOOLS_BENCH_TIMING_H_
#define TOOLS_BENCH_TIMING_H_

#include <algorithm>
#include <chrono>
#include <vector>

namespace fx::bench {

// The median wall time of `repeat` calls of `fn`, in microseconds, after one
// call not timed (warm-up: caches, lazy look-ups, the allocator).
template <typename Fn>
double median_us(Fn&& fn, int repeat) {
  fn();
  std::vector<double> times;
  for (int i = 0; i < repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    times.push_back(std::chrono::duration<double, std::micro>(
                        std::chrono::steady_clock::now() - start)
                        .count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace fx::bench

#endif  // TOOLS_BENCH_TIMING_H_
