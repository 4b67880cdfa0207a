// Timing for the benchmark binaries: the median of repeated runs.
#ifndef TOOLS_BENCH_TIMING_H_
#define TOOLS_BENCH_TIMING_H_

#include <algorithm>
#include <chrono>
#include <ctime>
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

// The calling thread's CPU time in microseconds: unlike wall time, not
// inflated when other processes take the cores.
inline double thread_cpu_us() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 +
         static_cast<double>(t.tv_nsec) / 1e3;
}

}  // namespace fx::bench

#endif  // TOOLS_BENCH_TIMING_H_
