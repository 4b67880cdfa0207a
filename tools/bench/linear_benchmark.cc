// The InferencePlan's linear kernels on the suite transformer encoder's
// shapes (d_model 512, 8 heads, feed-forward 2048; 128 tokens at batch 1,
// 1024 at batch 8), and resnet50's at batch 1 (its classifier, 1 row, and
// its 1x1 convolutions at 14x14 and 7x7 as products, 196 and 49 rows):
// OnednnLinear, PanelLinear and BlasLinear
// (linear_choice.h), each with its weights flushed from the caches before
// every run, as inside a network (`Cold`), and left in them (`Hot`). Each
// reports GFLOP/s. Threads: LibTorch's default unless --threads N is given
// first. What the kernels compute is checked by their tests; this times.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "fx_core/compile/linear_choice.h"

namespace {

enum Kernel { kOnednn, kPanel, kBlas };

// The kernel as the plan builds it under that policy (linear_choice.h).
std::unique_ptr<fx::FusedLinearKernel> make(Kernel kernel, const at::Tensor& w,
                                            const at::Tensor& b,
                                            std::vector<int64_t> in) {
  const fx::LinearPolicy policies[] = {fx::LinearPolicy::kOnednn,
                                       fx::LinearPolicy::kPanel,
                                       fx::LinearPolicy::kBlas};
  fx::set_linear_policy(policies[kernel]);
  return fx::choose_linear(w, b, {}, in).impl;
}

// Args: kernel, rows, k, n, cold (1) or hot (0).
void BM_Linear(benchmark::State& state) {
  const auto kernel = static_cast<Kernel>(state.range(0));
  const int64_t m = state.range(1), k = state.range(2), n = state.range(3);
  const bool cold = state.range(4) != 0;
  at::Tensor w = at::randn({n, k}), b = at::randn({n});
  at::Tensor x = at::randn({m, k}), out = at::empty({m, n});
  auto linear = make(kernel, w, b, {m, k});
  if (!linear) {
    state.SkipWithError("the kernel cannot run here");
    return;
  }
  linear->run(x, nullptr, out);
  for (auto _ : state) {
    if (cold) linear->evict_weights();
    const auto start = std::chrono::steady_clock::now();
    linear->run(x, nullptr, out);
    const std::chrono::duration<double> took =
        std::chrono::steady_clock::now() - start;
    state.SetIterationTime(took.count());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * m * k * n, benchmark::Counter::kIsIterationInvariantRate);
}

void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"kernel", "m", "k", "n", "cold"});
  for (int64_t m : {128, 1024}) {
    for (auto [k, n] : {std::pair<int64_t, int64_t>{512, 1536},
                        {512, 512},
                        {512, 2048},
                        {2048, 512}}) {
      for (int cold : {1, 0}) {
        for (int kernel : {kOnednn, kPanel, kBlas}) {
          b->Args({kernel, m, k, n, cold});
        }
      }
    }
  }
}

void resnet50_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"kernel", "m", "k", "n", "cold"});
  const int64_t shapes[][3] = {{1, 2048, 1000},  {49, 512, 2048},
                               {49, 2048, 512},  {49, 1024, 2048},
                               {196, 256, 1024}, {196, 1024, 256}};
  for (const auto& [m, k, n] : shapes) {
    for (int kernel : {kOnednn, kPanel, kBlas}) b->Args({kernel, m, k, n, 1});
  }
}

BENCHMARK(BM_Linear)->Apply(shapes)->UseManualTime()->MinTime(0.3);
BENCHMARK(BM_Linear)->Apply(resnet50_shapes)->UseManualTime()->MinTime(0.3);

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 && std::strcmp(argv[1], "--threads") == 0) {
    at::set_num_threads(std::atoi(argv[2]));
    argv[2] = argv[0];
    argc -= 2;
    argv += 2;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
