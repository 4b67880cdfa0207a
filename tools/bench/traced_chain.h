// The traced chain the benchmarks share (trace_benchmark, suite_benchmark):
// n operations cycling through add, mul by a parameter or an input, relu as
// a method and as torch.relu, and clamp; suite_bench.py builds its Python
// twin for torch.fx.
#ifndef TOOLS_BENCH_TRACED_CHAIN_H_
#define TOOLS_BENCH_TRACED_CHAIN_H_

#include <ATen/ATen.h>

#include <cstdint>

#include "fx_core/tracer/functions.h"
#include "fx_core/tracer/proxy.h"
#include "fx_core/tracer/tracer.h"

namespace fx::bench {

struct Chain : fx::Module<Chain> {
  explicit Chain(int64_t n) : fx::Module<Chain>("x, y"), n(n) {
    weight = register_parameter("weight", at::rand({4}));
  }
  Value forward(Value x, Value y) {
    using namespace fx::literals;  // NOLINT
    for (int64_t i = 0; i < n; ++i) {
      switch (i % 5) {
        case 0:
          x = x + 1.0;
          break;
        case 1:
          x = x * ((i % 4 == 1) ? Value(weight) : y);
          break;
        case 2:
          x = x.relu();
          break;
        case 3:
          x = fx::th::relu(x);
          break;
        default:
          x = x.clamp("min"_kw = -1.0);
          break;
      }
    }
    return x;
  }
  int64_t n;
  at::Tensor weight;
};

}  // namespace fx::bench

#endif  // TOOLS_BENCH_TRACED_CHAIN_H_
