// fx::make_fx's cost per recorded operator: a chain of N small ops on 4x4
// tensors, eager and captured, median of repeated runs, one thread; then
// capture_graph in each tracing mode (real, fake, symbolic: issue 31's goal
// is symbolic within 2x of real).
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
#include "fx_core/runtime/graph_module.h"
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

// Thread CPU time per op, medians of `repeats`: eager, then the three parts
// of make_fx: the capture, building the GraphModule (code and compiled plan)
// from the captured graph, and destroying it.
void print_cpu_breakdown(const fx::TensorFunction& fn, const Tensors& inputs,
                         int ops, int repeats) {
  std::vector<double> eager, capture, build, destroy;
  for (int r = 0; r < repeats; ++r) {
    double start = fx::bench::thread_cpu_us();
    fn(inputs);
    double t0 = fx::bench::thread_cpu_us();
    eager.push_back(t0 - start);
    fx::CapturedGraph captured = fx::capture_graph(fn, inputs);
    double t1 = fx::bench::thread_cpu_us();
    auto gm = std::make_shared<fx::GraphModule>(fx::GraphModule::AttributeMap{},
                                                std::move(captured.graph),
                                                "GraphModule");
    double t2 = fx::bench::thread_cpu_us();
    gm.reset();
    double t3 = fx::bench::thread_cpu_us();
    capture.push_back(t1 - t0);
    build.push_back(t2 - t1);
    destroy.push_back(t3 - t2);
  }
  auto median = [ops](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2] / ops;
  };
  std::printf(
      "%d ops, thread CPU time: eager %.2f us/op; capture_graph %.2f us/op "
      "(+%.2f over eager); GraphModule build %.2f us/op; its destruction "
      "%.2f us/op\n",
      ops, median(eager), median(capture), median(capture) - median(eager),
      median(build), median(destroy));
}

// capture_graph's wall time per op in each tracing mode.
void print_tracing_modes(const Tensors& inputs, int ops, int repeats) {
  auto fn = [ops](const Tensors& in) { return chain(in, ops); };
  std::printf("%d ops, capture_graph by tracing_mode:", ops);
  double real = 0;
  for (const char* mode : {"real", "fake", "symbolic"}) {
    fx::MakeFxOptions options;
    options.tracing_mode = mode;
    double us = fx::bench::median_us(
        [&] { fx::capture_graph(fn, inputs, options); }, repeats);
    if (real == 0) real = us;
    std::printf(" %s %.2f us/op (%.2fx real);", mode, us / ops, us / real);
  }
  std::printf("\n");
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
    print_cpu_breakdown(fn, inputs, ops, repeats);
    print_tracing_modes(inputs, std::min(ops, 2000), repeats);
  }
  return 0;
}
