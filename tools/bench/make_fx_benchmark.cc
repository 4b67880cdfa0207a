// fx::make_fx's cost per recorded operator: a chain of N small ops on 4x4
// tensors, eager and captured, median of repeated runs, one thread; then
// capture_graph in each tracing mode (real, fake, symbolic, and symbolic
// with composite replay off: issue 31's goal is symbolic within 2x of real).
//   bazel run --config=opt //tools/bench:make_fx_benchmark -- [N ...]
//   ... -- --profile MODE N LOOPS [encoder]: only capture_graph of N ops of
//   the heads reshapes (or N encoder layers) in MODE, LOOPS times (for perf
//   record).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>
#include <vector>

#include "fx_core/capture/composite_replay.h"
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

// Attention's reshape into heads and back, with sizes read from the input
// (symbolic in symbolic mode), then an add: 5 recorded ops a round.
Tensors heads(const Tensors& in, int ops) {
  at::Tensor x = in[0];
  for (int i = 0; i < ops / 5; ++i) {
    c10::SymInt b = x.sym_size(0), s = x.sym_size(1), d = x.sym_size(2);
    at::Tensor h = x.view_symint({b, s, 4, d / 4}).transpose(1, 2);
    x = at::add(h.transpose(1, 2).reshape_symint({b, s, d}), in[1]);
  }
  return {x};
}

// A transformer encoder layer as a model writes it, weights as inputs
// (x [b, s, d], then wq, wk, wv, wo [d, d], w1 [4d, d], w2 [d, 4d]): sizes
// read from x, q/k/v projected and reshaped into 4 heads, scaled scores,
// softmax, the heads merged back, the output projection, a residual add and
// layer norm, the feed-forward block with its own add and norm.
Tensors encoder(const Tensors& in, int layers) {
  at::Tensor x = in[0];
  for (int i = 0; i < layers; ++i) {
    c10::SymInt b = x.sym_size(0), s = x.sym_size(1), d = x.sym_size(2);
    auto heads = [&](const at::Tensor& t) {
      return t.view_symint({b, s, 4, d / 4}).transpose(1, 2);
    };
    at::Tensor q = heads(at::linear(x, in[1]));
    at::Tensor k = heads(at::linear(x, in[2]));
    at::Tensor v = heads(at::linear(x, in[3]));
    at::Tensor scores = at::matmul(q, k.transpose(-2, -1)).div(2.0);
    at::Tensor o = at::matmul(at::softmax(scores, -1), v)
                       .transpose(1, 2)
                       .reshape_symint({b, s, d});
    x = std::get<0>(at::native_layer_norm_symint(
        at::add(x, at::linear(o, in[4])), {d}, {}, {}, 1e-5));
    at::Tensor h = at::linear(at::relu(at::linear(x, in[5])), in[6]);
    x = std::get<0>(
        at::native_layer_norm_symint(at::add(x, h), {d}, {}, {}, 1e-5));
  }
  return {x};
}

// The ATen calls encoder() makes per layer: 3 x (linear, view, transpose),
// transpose, matmul, div, softmax, matmul, transpose, reshape, linear, add,
// layer norm, linear, relu, linear, add, layer norm.
constexpr int kEncoderCallsPerLayer = 9 + 15;

Tensors encoder_inputs() {
  return {at::randn({2, 6, 16}), at::randn({16, 16}), at::randn({16, 16}),
          at::randn({16, 16}),   at::randn({16, 16}), at::randn({64, 16}),
          at::randn({16, 64})};
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

// capture_graph's thread CPU time (median) per op and per recorded node in
// each tracing mode, on the add/relu chain, the heads reshapes and the
// encoder layers; symbolic mode also with composite replay off
// (capture/composite_replay.h). The modes take turns within each repeat, so
// the VM's drift between runs does not land on one mode.
void print_tracing_modes(int ops, int repeats) {
  const Tensors chain_inputs = {at::randn({4, 4}), at::randn({4, 4})};
  const Tensors heads_inputs = {at::randn({2, 6, 16}), at::randn({2, 6, 16})};
  const Tensors layer_inputs = encoder_inputs();
  const int layers = std::max(1, ops / kEncoderCallsPerLayer);
  struct Mode {
    const char* name;
    const char* tracing_mode;
    bool replay;
  };
  const Mode modes[] = {{"real", "real", true},
                        {"fake", "fake", true},
                        {"symbolic", "symbolic", true},
                        {"symbolic without replay", "symbolic", false}};
  for (int workload : {0, 1, 2}) {
    const Tensors& inputs = workload == 0   ? chain_inputs
                            : workload == 1 ? heads_inputs
                                            : layer_inputs;
    fx::TensorFunction fn = [ops, workload, layers](const Tensors& in) {
      return workload == 0   ? chain(in, ops)
             : workload == 1 ? heads(in, ops)
                             : encoder(in, layers);
    };
    const char* name = workload == 0   ? "add/relu"
                       : workload == 1 ? "view/transpose/reshape/add"
                                       : "encoder layers";
    // Per user-level ATen call.
    const int calls = workload == 2 ? layers * kEncoderCallsPerLayer : ops;
    std::vector<std::vector<double>> cpu(std::size(modes));
    std::vector<size_t> nodes(std::size(modes));
    for (int r = 0; r < repeats; ++r) {
      for (size_t m = 0; m < std::size(modes); ++m) {
        fx::MakeFxOptions options;
        options.tracing_mode = modes[m].tracing_mode;
        fx::capture::CompositeReplay::set_enabled(modes[m].replay);
        double start = fx::bench::thread_cpu_us();
        {  // the graph's destruction counted, as before
          fx::CapturedGraph captured = fx::capture_graph(fn, inputs, options);
          nodes[m] = captured.graph->size();
        }
        cpu[m].push_back(fx::bench::thread_cpu_us() - start);
      }
    }
    fx::capture::CompositeReplay::set_enabled(true);
    std::printf("%d ops (%s), capture_graph CPU time by tracing_mode:", calls,
                name);
    double real = 0, real_per_node = 0;
    for (size_t m = 0; m < std::size(modes); ++m) {
      std::sort(cpu[m].begin(), cpu[m].end());
      double us = cpu[m][cpu[m].size() / 2];
      double per_node = us / static_cast<double>(nodes[m]);
      if (real == 0) real = us, real_per_node = per_node;
      std::printf(
          " %s %.2f us/op (%.2fx real), %zu nodes, %.2f us/node "
          "(%.2fx real);",
          modes[m].name, us / calls, us / real, nodes[m], per_node,
          per_node / real_per_node);
    }
    std::printf("\n");
  }
}

// capture_graph of the heads reshapes (or the encoder layers) alone, for a
// profiler.
int profile(const std::string& mode, int ops, int loops, bool layers) {
  const Tensors inputs =
      layers ? encoder_inputs()
             : Tensors{at::randn({2, 6, 16}), at::randn({2, 6, 16})};
  auto fn = [ops, layers](const Tensors& in) {
    return layers ? encoder(in, ops) : heads(in, ops);
  };
  fx::MakeFxOptions options;
  options.tracing_mode = mode;
  for (int i = 0; i < loops; ++i) fx::capture_graph(fn, inputs, options);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  at::set_num_threads(1);
  if ((argc == 5 || argc == 6) && std::string(argv[1]) == "--profile") {
    return profile(argv[2], std::atoi(argv[3]), std::atoi(argv[4]),
                   argc == 6 && std::string(argv[5]) == "encoder");
  }
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
    print_tracing_modes(std::min(ops, 2000), repeats);
  }
  return 0;
}
