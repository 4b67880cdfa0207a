// Symbolic tracing at scale, and what fx::Value costs when model code runs
// eagerly.
//
//   bazel run --config=opt //tools/bench:trace_benchmark
//
// Trace: a module whose forward is a chain of N recorded operations (cycling
// through x + 1.0, x * y, x.relu(), torch.relu(x) and x.clamp(min=...),
// every fourth operand a parameter so get_attr and the parameter cache are
// exercised), for N = 1k, 10k, 100k. BM_Trace times Tracer::trace (the
// graph); BM_SymbolicTrace adds the GraphModule (code generation and the
// execution plan). Time per node should stay flat as N grows (tracing is
// linear). torch.fx 1.13 on this machine traces the same kind of chain in
// 37 ms at 1k and 1.67 s at 10k nodes (quadratic).
//
// Eager: the same small MLP-like block (matmul, add, relu, mul, clamp,
// sigmoid) written against at::Tensor and against fx::Value, on 16x16 and
// 256x256 tensors. The difference is fx::Value's overhead per operation.
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>

#include <memory>

#include "fx_core/runtime/graph_module.h"
#include "fx_core/tracer/functions.h"
#include "fx_core/tracer/tracer.h"
#include "sdk_examples/tracing/examples.h"
#include "tools/bench/traced_chain.h"

namespace {

using fx::Value;
using namespace fx::literals;  // NOLINT

using fx::bench::Chain;

void BM_Trace(benchmark::State& state) {
  Chain m(state.range(0));
  for (auto _ : state) {
    fx::Tracer tracer;
    std::unique_ptr<fx::Graph> g = tracer.trace(m);
    benchmark::DoNotOptimize(g.get());
    state.PauseTiming();
    g.reset();
    state.ResumeTiming();
  }
  state.counters["ns_per_node"] =
      benchmark::Counter(static_cast<double>(state.range(0)),
                         benchmark::Counter::kIsIterationInvariantRate |
                             benchmark::Counter::kInvert);
}
BENCHMARK(BM_Trace)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(
    benchmark::kMillisecond);

void BM_SymbolicTrace(benchmark::State& state) {
  Chain m(state.range(0));
  for (auto _ : state) {
    auto gm = fx::symbolic_trace(m);
    benchmark::DoNotOptimize(gm.get());
    state.PauseTiming();
    gm.reset();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_SymbolicTrace)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

// torchvision models ported with the SDK (sdk_examples/tracing), traced into
// GraphModules. torch.fx 1.13's symbolic_trace of torchvision's resnet18 takes
// about 3.4 ms and of mobilenet_v2 7.4 ms of CPU time here.
void BM_SymbolicTraceModel(benchmark::State& state, const char* name) {
  std::shared_ptr<fx::TraceableModule> m = fx::examples::make_example(name);
  for (auto _ : state) {
    auto gm = fx::symbolic_trace(*m);
    benchmark::DoNotOptimize(gm.get());
  }
}
BENCHMARK_CAPTURE(BM_SymbolicTraceModel, resnet18, "resnet18")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SymbolicTraceModel, mobilenet_v2, "mobilenet_v2")
    ->Unit(benchmark::kMillisecond);

// ------------------------------------------------------------------ eager

at::Tensor block_tensor(const at::Tensor& x, const at::Tensor& w,
                        const at::Tensor& b) {
  at::Tensor h = at::matmul(x, w) + b;
  h = h.relu();
  h = h * x;
  h = h.clamp(-1.0, 1.0);
  return at::sigmoid(h) + 1.0;
}

Value block_value(const Value& x, const Value& w, const Value& b) {
  Value h = fx::matmul(x, w) + b;
  h = h.relu();
  h = h * x;
  h = h.clamp(-1.0, 1.0);
  return fx::th::sigmoid(h) + 1.0;
}

void BM_EagerTensor(benchmark::State& state) {
  int64_t n = state.range(0);
  at::Tensor x = at::rand({n, n}), w = at::rand({n, n}), b = at::rand({n});
  for (auto _ : state) {
    at::Tensor y = x;
    for (int i = 0; i < 10; ++i) y = block_tensor(y, w, b);
    benchmark::DoNotOptimize(y.data_ptr());
  }
}
BENCHMARK(BM_EagerTensor)->Arg(16)->Arg(256)->Unit(benchmark::kMicrosecond);

// clamp with positional numbers runs through the op registry's kernel; the
// other operations are inline.
void BM_EagerValue(benchmark::State& state) {
  int64_t n = state.range(0);
  Value x = at::rand({n, n}), w = at::rand({n, n}), b = at::rand({n});
  for (auto _ : state) {
    Value y = x;
    for (int i = 0; i < 10; ++i) y = block_value(y, w, b);
    benchmark::DoNotOptimize(y.tensor().data_ptr());
  }
}
BENCHMARK(BM_EagerValue)->Arg(16)->Arg(256)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
