// The cost of the C ABI and of the pass manager (issue: a pass written
// against the C ABI costs at most 1.2x the same pass against fx_core; the
// pass manager's overhead per pass, verification included, is linear).
//
//   bazel run --config=opt //tools/bench:pass_benchmark
//
// BM_Pass/fx_core and BM_Pass/c_abi run the same pass (visit every node and
// its args, rewrite every tenth call_function) on a chain of N nodes; the
// C ABI one is loaded from a plugin (bench_plugin.cc) and called through the
// function table, exactly as the pass manager calls it. BM_PassManager runs
// a pass that changes nothing through the PassManager: snapshot, call,
// lint, change detection and commit, per node.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "host/capi/c_api.h"
#include "host/loader/plugin_loader.h"
#include "host/options/pass_options.h"
#include "host/pipeline/pass_manager.h"

namespace {

// x -> add(x, 1) -> mul(., 2) -> add(., 1) ... -> output: n nodes.
std::unique_ptr<fx::Graph> chain(int64_t n) {
  auto g = std::make_unique<fx::Graph>();
  fx::Node* x = g->placeholder("x");
  for (int64_t i = 0; i + 2 < n; ++i) {
    x = g->call_function(i % 2 ? "operator.mul" : "operator.add",
                         {x, i % 2 ? 2 : 1});
  }
  g->output(x);
  return g;
}

int64_t visit(const fx::Argument& arg) {
  if (arg.is_node()) return 1;
  int64_t refs = 0;
  if (arg.is_sequence()) {
    for (const fx::Argument& a : arg.elements()) refs += visit(a);
  }
  return refs;
}

bool rewrite_tenth(fx::Graph& g, size_t every) {
  int64_t refs = 0;
  size_t calls = 0;
  for (fx::Node* n : g.nodes()) {
    for (const fx::Argument& a : n->args()) refs += visit(a);
    if (n->op() != fx::Opcode::kCallFunction || every == 0 ||
        ++calls % every != 0) {
      continue;
    }
    auto guard = g.inserting_before(n);
    fx::Node* fresh = g.node_copy(n);
    n->replace_all_uses_with(fresh);
    g.erase_node(n);
  }
  return refs > 0;
}

const fx::host::Plugin& bench_plugin() {
  static auto plugin = [] {
    auto p = fx::host::load_plugin("tools/bench/libbench_passes.so");
    if (!p.ok()) {
      fprintf(stderr, "%s\n", std::string(p.status().message()).c_str());
      std::abort();
    }
    return *p;
  }();
  return *plugin;
}

void BM_Pass_fx_core(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    auto g = chain(state.range(0));
    state.ResumeTiming();
    benchmark::DoNotOptimize(rewrite_tenth(*g, 10));
    state.PauseTiming();
    g.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_Pass_c_abi(benchmark::State& state) {
  const FxPassInfo& pass = bench_plugin().pass(0);
  FxOptions options = *fx::host::bind_pass_options(pass, {});
  fx::host::LentOptions lent(options);
  for (auto _ : state) {
    state.PauseTiming();
    auto g = chain(state.range(0));
    state.ResumeTiming();
    int changed = 0;
    FxStatus* status = pass.run(fx::host::api(), fx::host::to_handle(g.get()),
                                lent.handle(), pass.user_data, &changed);
    if (status != nullptr) {
      state.SkipWithError(fx::host::take_status(status).message.c_str());
    }
    state.PauseTiming();
    g.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

// Only the visit (no rewrite): the per-node cost of reading through the ABI.
void BM_Visit_fx_core(benchmark::State& state) {
  auto g = chain(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(rewrite_tenth(*g, 0));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_Visit_c_abi(benchmark::State& state) {
  const FxPassInfo& pass = bench_plugin().pass(0);
  fx::host::OptionInput zero;
  zero.text = "0";
  FxOptions options = *fx::host::bind_pass_options(pass, {{"every", zero}});
  fx::host::LentOptions lent(options);
  auto g = chain(state.range(0));
  for (auto _ : state) {
    int changed = 0;
    FxStatus* status = pass.run(fx::host::api(), fx::host::to_handle(g.get()),
                                lent.handle(), pass.user_data, &changed);
    if (status != nullptr) {
      state.SkipWithError(fx::host::take_status(status).message.c_str());
    }
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

FxStatus* noop(const FxApi*, FxGraph*, const FxOptions*, void*, int* changed) {
  *changed = 0;
  return nullptr;
}

void BM_PassManager(benchmark::State& state) {
  static const FxPassInfo pass = [] {
    FxPassInfo p{};
    p.name = "noop";
    p.run = &noop;
    return p;
  }();
  static const FxPluginInfo info = [] {
    FxPluginInfo i{};
    i.name = "bench";
    i.version = "1";
    i.api_version = i.min_api_version = FX_API_VERSION;
    i.passes = &pass;
    i.num_passes = 1;
    return i;
  }();
  fx::host::PassRegistry registry;
  (void)registry.add(*fx::host::Plugin::from_info(&info, "bench"));
  auto spec = fx::host::parse_pipeline_text("noop");
  auto pm = fx::host::PassManager::create(registry, *spec);
  fx::GraphFile file;
  file.graph = chain(state.range(0));
  fx::host::GraphFileTarget target(file);
  for (auto _ : state) {
    fx::host::PipelineReport report = pm->run(target);
    benchmark::DoNotOptimize(report);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

BENCHMARK(BM_Pass_fx_core)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Pass_c_abi)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Visit_fx_core)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Visit_c_abi)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PassManager)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
