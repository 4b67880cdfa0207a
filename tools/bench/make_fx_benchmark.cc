// fx::make_fx's cost per recorded operator: a chain of N small ops on 4x4
// tensors, eager and captured, median of repeated runs, one thread.
//   bazel run --config=opt //tools/bench:make_fx_benchmark -- [N ...]
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fx_core/capture/make_fx.h"
#include "tools/bench/timing.h"

namespace {

using Tensors = std::vector<at::Tensor>;

Tensors chain(const Tensors& in, int ops) {
  at::Tensor x = in[0];
  for (int i = 0; i < ops; ++i) {
    x = (i % 2 == 0) ? at::add(x, in[1]) : at::relu(x);
  }
  return {x};
}

}  // namespace

int main(int argc, char** argv) {
  at::set_num_threads(1);
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {1000, 10000};
  Tensors inputs = {at::randn({4, 4}), at::randn({4, 4})};
  for (int ops : sizes) {
    int repeats = ops >= 100000 ? 3 : 11;
    auto fn = [ops](const Tensors& in) { return chain(in, ops); };
    double eager = fx::bench::median_us([&] { chain(inputs, ops); }, repeats);
    double capture =
        fx::bench::median_us([&] { fx::capture_graph(fn, inputs); }, repeats);
    double total =
        fx::bench::median_us([&] { fx::make_fx(fn, inputs); }, repeats);
    std::printf(
        "%d ops: eager %.2f us/op; capture_graph %.2f us/op (+%.2f over "
        "eager); make_fx with the GraphModule %.2f us/op; 1 thread\n",
        ops, eager / ops, capture / ops, (capture - eager) / ops, total / ops);
  }
  return 0;
}
