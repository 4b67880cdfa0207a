// Compiling a GraphModule (GraphModule::recompile: the step compiler
// resolving and binding every node) on chains of N nodes, for targets with a
// hand-written kernel (torch.relu) and targets bound to ATen's schemas
// (torch.ops.aten.sin.default, torch.logsumexp with a constant dim: each node
// specialised to the overloads that can accept it).
//   bazel run --config=opt //tools/bench:compile_benchmark
#include <benchmark/benchmark.h>
#include <torch/nn/module.h>

#include <memory>
#include <string>

#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"

namespace {

std::unique_ptr<fx::Graph> chain(int64_t n, const std::string& target,
                                 bool dim_arg) {
  auto g = std::make_unique<fx::Graph>();
  fx::Node* x = g->placeholder("x");
  for (int64_t i = 0; i < n; ++i) {
    fx::Node::Args args = {x};
    if (dim_arg) args.push_back(fx::Argument(int64_t{-1}));
    x = g->call_function(target, args);
  }
  g->output(x);
  return g;
}

void compile(benchmark::State& state, const std::string& target, bool dim_arg) {
  torch::nn::Module root;
  fx::GraphModule gm(root, chain(state.range(0), target, dim_arg));
  for (auto _ : state) {
    gm.recompile();
    benchmark::DoNotOptimize(gm.check_executable().ok());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_CompileHandWritten(benchmark::State& state) {
  compile(state, "torch.relu", false);
}
void BM_CompileAtenExactOverload(benchmark::State& state) {
  compile(state, "torch.ops.aten.sin.default", false);
}
void BM_CompileAtenOverloadSet(benchmark::State& state) {
  compile(state, "torch.logsumexp", true);
}

BENCHMARK(BM_CompileHandWritten)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CompileAtenExactOverload)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CompileAtenOverloadSet)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
