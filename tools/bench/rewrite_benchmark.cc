// replace_pattern at scale: the subgraph rewriter on 1k, 10k and 100k-node
// graphs, against torch.fx's subgraph_rewriter.replace_pattern on the same
// graph in the same run.
//
//   bazel run --config=opt //tools/bench:rewrite_benchmark
//   ... rewrite_benchmark -- --benchmark_filter=Match   # one operation
//   ... rewrite_benchmark -- --torchfx_sizes=1000,10000  # torch.fx's sizes
//                                                       # (0 to skip it)
//
// The graph: a placeholder, then blocks of `add = x + 1; relu =
// torch.relu(add); mul = relu * 2`, then the output. The pattern is
// `torch.relu(x + 1)` (it matches in every block), the replacement
// `torch.nn.functional.relu(x + 1, inplace=False)` (as torch.fx traces it).
// Timed per run (the graph is rebuilt outside the timing):
//  - Match:           SubgraphMatcher::match only;
//  - ReplaceInGraph:  replace_pattern_in_graph (match, copy, rewire, erase);
//  - ReplacePattern:  replace_pattern on a GraphModule (the above plus
//                     recompile, i.e. code generation, as torch.fx does);
//  - MultiOutputMatch: a two-output pattern (sigmoid(x), relu(x)) on blocks
//                     of `s = sigmoid(x); r = relu(x); x = s + r`: candidates
//                     for the second anchor come from the first's match.
// Complexity is fitted over the sizes (Google Benchmark's BigO line).
//
// torch.fx: the embedded script builds the same graph with torch.fx's Graph
// API, times replace_pattern (median of 3, CPU time) and prints the match
// count, which must equal ours. torch.fx 1.13's cycle check recurses along
// every path out of a match, so on these chains it stops with RecursionError
// (from about 1k nodes); the script then measures again with the recursion
// limit raised and says so. Skipped without python3-torch at
// /usr/bin/python3.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fx_core/ir/graph.h"
#include "fx_core/rewrite/subgraph_matcher.h"
#include "fx_core/rewrite/subgraph_rewriter.h"
#include "fx_core/runtime/graph_module.h"

namespace {

constexpr int64_t kBlockNodes = 3;

// About n nodes: x, (n - 2) / 3 blocks, output.
std::unique_ptr<fx::Graph> build_graph(int64_t n) {
  auto g = std::make_unique<fx::Graph>();
  fx::Node* x = g->placeholder("x");
  for (int64_t i = 0; i < (n - 2) / kBlockNodes; ++i) {
    fx::Node* add = g->call_function("operator.add", {x, fx::Argument(1)});
    fx::Node* relu = g->call_function("torch.relu", {add});
    x = g->call_function("operator.mul", {relu, fx::Argument(2)});
  }
  g->output(x);
  return g;
}

std::unique_ptr<fx::Graph> build_multi_output_graph(int64_t n) {
  auto g = std::make_unique<fx::Graph>();
  fx::Node* x = g->placeholder("x");
  for (int64_t i = 0; i < (n - 2) / kBlockNodes; ++i) {
    fx::Node* s = g->call_function("torch.sigmoid", {x});
    fx::Node* r = g->call_function("torch.relu", {x});
    x = g->call_function("operator.add", {s, r});
  }
  g->output(x);
  return g;
}

struct Patterns {
  fx::Graph pattern, replacement, multi_pattern;
  Patterns() {
    fx::Node* x = pattern.placeholder("x");
    pattern.output(pattern.call_function(
        "torch.relu",
        {pattern.call_function("operator.add", {x, fx::Argument(1)})}));
    fx::Node* y = replacement.placeholder("x");
    fx::Node* add =
        replacement.call_function("operator.add", {y, fx::Argument(1)});
    replacement.output(replacement.call_function(
        "torch.nn.functional.relu", {add}, {{"inplace", fx::Argument(false)}}));
    fx::Node* a = multi_pattern.placeholder("a");
    multi_pattern.output(
        fx::Argument::tuple({multi_pattern.call_function("torch.sigmoid", {a}),
                             multi_pattern.call_function("torch.relu", {a})}));
  }
};

const Patterns& patterns() {
  static const Patterns* p = new Patterns();
  return *p;
}

// The match count of the last run and the size, for the BigO fit.
void report(benchmark::State& state, size_t matches) {
  state.counters["matches"] = static_cast<double>(matches);
  state.SetComplexityN(state.range(0));
}

// Times SubgraphMatcher::match of `pattern` on `g`.
void time_match(benchmark::State& state, const fx::Graph& g,
                const fx::Graph& pattern) {
  fx::SubgraphMatcher matcher(pattern);
  size_t matches = 0;
  for (auto _ : state) {
    matches = matcher.match(g).size();
    benchmark::DoNotOptimize(matches);
  }
  report(state, matches);
}

// Times `replace` (returning the matches replaced) on what `fresh` makes,
// made anew for every run and made and freed outside the timing.
template <typename Fresh, typename Replace>
void time_replace(benchmark::State& state, Fresh fresh, Replace replace) {
  size_t matches = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto target = fresh();
    state.ResumeTiming();
    matches = replace(*target);
    state.PauseTiming();
    target.reset();
    state.ResumeTiming();
  }
  report(state, matches);
}

void BM_Match(benchmark::State& state) {
  time_match(state, *build_graph(state.range(0)), patterns().pattern);
}

void BM_ReplaceInGraph(benchmark::State& state) {
  time_replace(
      state, [&] { return build_graph(state.range(0)); },
      [](fx::Graph& g) {
        return fx::replace_pattern_in_graph(g, patterns().pattern,
                                            patterns().replacement)
            .size();
      });
}

void BM_ReplacePattern(benchmark::State& state) {
  time_replace(
      state,
      [&] {
        return std::make_shared<fx::GraphModule>(
            fx::GraphModule::AttributeMap{}, build_graph(state.range(0)));
      },
      [](fx::GraphModule& gm) {
        return fx::replace_pattern(gm, patterns().pattern,
                                   patterns().replacement)
            .size();
      });
}

void BM_MultiOutputMatch(benchmark::State& state) {
  time_match(state, *build_multi_output_graph(state.range(0)),
             patterns().multi_pattern);
}

#define SIZES                                               \
  ->Arg(1000)->Arg(10000)->Arg(100000)->Complexity()->Unit( \
      benchmark::kMillisecond)
BENCHMARK(BM_Match) SIZES;
BENCHMARK(BM_ReplaceInGraph) SIZES;
BENCHMARK(BM_ReplacePattern) SIZES;
BENCHMARK(BM_MultiOutputMatch) SIZES;

// The same graph and rewrite in torch.fx.
constexpr char kTorchFxScript[] = R"PY(
import operator, sys, time
import torch, torch.fx as fx
from torch.fx import subgraph_rewriter

def build(n):
    g = fx.Graph()
    x = g.placeholder("x")
    for _ in range((n - 2) // 3):
        add = g.call_function(operator.add, (x, 1))
        relu = g.call_function(torch.relu, (add,))
        x = g.call_function(operator.mul, (relu, 2))
    g.output(x)
    return fx.GraphModule(torch.nn.Module(), g)

def pattern(x):
    return torch.relu(x + 1)

def replacement(x):
    return torch.nn.functional.relu(x + 1)

def measure(n, note):
    times = []
    for _ in range(3):
        gm = build(n)
        t0 = time.process_time()
        matches = subgraph_rewriter.replace_pattern(gm, pattern, replacement)
        times.append(time.process_time() - t0)
    times.sort()
    print(f"torch.fx replace_pattern n={n}: {times[1] * 1e3:.1f} ms CPU "
          f"(median of 3), {len(matches)} matches{note}", flush=True)

def deep(n):
    # torch.fx's validate_partition recurses along every path out of a match:
    # past Python's recursion limit it needs a raised limit on a large stack.
    import threading
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10**7)
    threading.stack_size(1 << 30)
    t = threading.Thread(target=measure, args=(n, " (recursion limit raised: "
                                                "RecursionError otherwise)"))
    t.start()
    t.join()
    sys.setrecursionlimit(limit)

for n in map(int, sys.argv[1].split(",")):
    try:
        measure(n, "")
    except RecursionError:
        deep(n)
)PY";

void run_torchfx(const std::string& sizes) {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
    std::printf("torch.fx: skipped (python3-torch is not installed)\n");
    return;
  }
  std::string path =
      "/tmp/fx_rewrite_bench_" + std::to_string(getpid()) + ".py";
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return;
  std::fputs(kTorchFxScript, f);
  std::fclose(f);
  std::string command = "/usr/bin/python3 " + path + " " + sizes;
  std::fflush(stdout);
  if (std::system(command.c_str()) != 0) std::printf("torch.fx: failed\n");
  std::remove(path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::string torchfx_sizes = "1000,10000";
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--torchfx_sizes=", 16) == 0) {
      torchfx_sizes = argv[i] + 16;
    } else {
      args.push_back(argv[i]);
    }
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (torchfx_sizes != "0") run_torchfx(torchfx_sizes);
  return 0;
}
