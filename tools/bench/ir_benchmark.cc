// The IR's cost at scale: build, deepcopy, print (str()), codegen
// (python_code) and lint for 1k, 10k and 100k-node graphs, a rewrite pass
// (insert after every third node, replace_all_uses_with, erase again), and the
// live heap bytes per node of a built graph.
//
//   bazel run --config=opt //tools/bench:ir_benchmark   # -c opt at -O2
//   ... ir_benchmark -- --benchmark_filter=Codegen     # one operation
//   tools/bench/compare_ir.sh   # the same against torch.fx, with ratios
//
// The graph is the one tools/bench/torchfx_ir_bench.py builds with torch.fx's
// Graph API (the generated code is byte-identical; compare_ir.sh checks it
// with --dump_code=N, which prints python_code() of an N-node graph).
//
// Bytes per node: this binary replaces the global operator new/delete with a
// counting allocator (malloc underneath). While a graph is being built for the
// measurement, every block allocated is recorded with its requested size and
// malloc_usable_size(), and forgotten again when freed; what remains is the
// graph's live heap. bytes_per_node is the requested bytes (as Python's
// tracemalloc counts them), heap_bytes_per_node what malloc hands out for them
// (size-class rounding included, its 8-byte chunk headers not), both divided
// by the node count.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"
#include "fx_core/support/strings.h"

// ------------------------------------------------------- counting allocator

namespace {

// std::allocator over malloc, so the table of live blocks does not count
// itself.
template <typename T>
struct MallocAllocator {
  using value_type = T;
  MallocAllocator() = default;
  template <typename U>
  MallocAllocator(const MallocAllocator<U>&) {}  // NOLINT
  T* allocate(size_t n) {
    void* p = std::malloc(n * sizeof(T));
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) { std::free(p); }
  friend bool operator==(const MallocAllocator&, const MallocAllocator&) {
    return true;
  }
  friend bool operator!=(const MallocAllocator&, const MallocAllocator&) {
    return false;
  }
};

struct Block {
  size_t requested;
  size_t usable;
};
using BlockTable =
    std::unordered_map<void*, Block, std::hash<void*>, std::equal_to<void*>,
                       MallocAllocator<std::pair<void* const, Block>>>;

std::atomic<bool> g_counting{false};
std::mutex g_table_mutex;
BlockTable* g_live_blocks = nullptr;  // set while counting

void record_alloc(void* p, size_t size) {
  if (!g_counting.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(g_table_mutex);
  if (g_live_blocks == nullptr) return;
  (*g_live_blocks)[p] = Block{size, malloc_usable_size(p)};
}

void* counted_alloc(size_t size) {
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  record_alloc(p, size);
  return p;
}

void* counted_aligned_alloc(size_t size, std::align_val_t align) {
  size_t a = static_cast<size_t>(align);
  size_t rounded = (size == 0 ? a : (size + a - 1) / a * a);
  void* p = std::aligned_alloc(a, rounded);
  if (p == nullptr) throw std::bad_alloc();
  record_alloc(p, size);
  return p;
}

void counted_free(void* p) noexcept {
  if (p == nullptr) return;
  if (g_counting.load(std::memory_order_relaxed)) {
    std::lock_guard<std::mutex> lock(g_table_mutex);
    if (g_live_blocks != nullptr) g_live_blocks->erase(p);
  }
  std::free(p);
}

}  // namespace

void* operator new(size_t size) { return counted_alloc(size); }
void* operator new[](size_t size) { return counted_alloc(size); }
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t size, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(size_t size, std::align_val_t align) {
  return counted_aligned_alloc(size, align);
}
void* operator new[](size_t size, std::align_val_t align) {
  return counted_aligned_alloc(size, align);
}
void* operator new(size_t size, std::align_val_t align,
                   const std::nothrow_t&) noexcept {
  try {
    return counted_aligned_alloc(size, align);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t size, std::align_val_t align,
                     const std::nothrow_t&) noexcept {
  try {
    return counted_aligned_alloc(size, align);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, size_t) noexcept { counted_free(p); }
void operator delete[](void* p, size_t) noexcept { counted_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept {
  counted_free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  counted_free(p);
}
void operator delete(void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept {
  counted_free(p);
}
void operator delete[](void* p, size_t, std::align_val_t) noexcept {
  counted_free(p);
}
void operator delete(void* p, std::align_val_t,
                     const std::nothrow_t&) noexcept {
  counted_free(p);
}
void operator delete[](void* p, std::align_val_t,
                       const std::nothrow_t&) noexcept {
  counted_free(p);
}

namespace {

using fx::Argument;
using fx::Graph;
using fx::Node;
using fx::Opcode;

// ------------------------------------------------------------------ graph

// x, y, weight, bias, add(x, y) before the blocks; output after them.
constexpr int64_t kFixedNodes = 6;
constexpr int64_t kBlockNodes = 11;

// A graph of exactly `n` nodes (n >= 6), as a traced CNN/MLP stack looks:
//   placeholders x, y; get_attr weight, bias; add = x + y; then blocks of
//     add = prev + 1.0;  mul = add * weight;  add_1 = mul + bias
//     relu = torch.relu(add_1);  view = relu.view(-1, 64)
//     clamp = view.clamp(min = -6.0, max = 6.0)
//     layers_K_linear = self.layers.K.linear(clamp)     (K = block number)
//     split = torch.functional.split(layers_K_linear, 32, dim = 1)
//     getitem = split[0];  getitem_1 = split[1];  mul_1 = getitem * getitem_1
//   padded with `add = prev + 1.0` to n - 1 nodes, then `return prev`.
// torchfx_ir_bench.py's build_graph() is the same graph.
void build_graph(Graph& g, int64_t n) {
  Node* x = g.placeholder("x");
  Node* y = g.placeholder("y");
  Node* weight = g.get_attr("weight");
  Node* bias = g.get_attr("bias");
  Node* prev = g.call_function("operator.add", {x, y});
  int64_t remaining = n - kFixedNodes;
  for (int64_t block = 0; remaining >= kBlockNodes; ++block) {
    Node* add = g.call_function("operator.add", {prev, 1.0});
    Node* mul = g.call_function("operator.mul", {add, weight});
    Node* add_1 = g.call_function("operator.add", {mul, bias});
    Node* relu = g.call_function("torch.relu", {add_1});
    Node* view = g.call_method("view", {relu, -1, 64});
    Node* clamp = g.call_method("clamp", {view}, {{"min", -6.0}, {"max", 6.0}});
    Node* linear = g.call_module(fx::cat("layers.", block, ".linear"), {clamp});
    Node* split =
        g.call_function("torch.functional.split", {linear, 32}, {{"dim", 1}});
    Node* first = g.call_function("operator.getitem", {split, 0});
    Node* second = g.call_function("operator.getitem", {split, 1});
    prev = g.call_function("operator.mul", {first, second});
    remaining -= kBlockNodes;
  }
  for (; remaining > 0; --remaining) {
    prev = g.call_function("operator.add", {prev, 1.0});
  }
  g.output(prev);
}

std::unique_ptr<Graph> make_graph(int64_t n) {
  auto g = std::make_unique<Graph>();
  build_graph(*g, n);
  return g;
}

struct GraphBytes {
  size_t requested = 0;
  size_t usable = 0;
};

// The live heap a freshly built n-node graph holds.
GraphBytes measure_graph_bytes(int64_t n) {
  BlockTable table;
  {
    std::lock_guard<std::mutex> lock(g_table_mutex);
    g_live_blocks = &table;
  }
  g_counting.store(true);
  auto g = make_graph(n);
  g_counting.store(false);
  {
    std::lock_guard<std::mutex> lock(g_table_mutex);
    g_live_blocks = nullptr;
  }
  GraphBytes bytes;
  for (const auto& [p, block] : table) {
    bytes.requested += block.requested;
    bytes.usable += block.usable;
  }
  g.reset();
  return bytes;
}

// The rewrite pass: after every third node (output excepted) insert
// `neg = torch.neg(node)`, point node's other users at it
// (replace_all_uses_with with a filter), then undo: uses back to node, erase
// neg. The graph ends as it began.
void edit_graph(Graph& g) {
  std::vector<Node*> nodes = g.nodes().to_vector();
  for (size_t i = 0; i < nodes.size(); i += 3) {
    Node* node = nodes[i];
    if (node->op() == Opcode::kOutput) continue;
    Node* neg;
    {
      auto ip = g.inserting_after(node);
      neg = g.call_function("torch.neg", {node});
    }
    node->replace_all_uses_with(neg, [neg](Node* user) { return user != neg; });
    neg->replace_all_uses_with(node);
    g.erase_node(neg);
  }
  g.purge_erased_nodes();
}

// -------------------------------------------------------------- benchmarks

void set_items(benchmark::State& state, int64_t n) {
  state.SetItemsProcessed(state.iterations() * n);
  state.counters["nodes"] = static_cast<double>(n);
}

bool check_size(benchmark::State& state, const Graph& g, int64_t n) {
  if (static_cast<int64_t>(g.size()) == n) return true;
  state.SkipWithError("graph has the wrong number of nodes");
  return false;
}

void BM_Build(benchmark::State& state) {
  const int64_t n = state.range(0);
  for (auto _ : state) {
    auto g = make_graph(n);
    benchmark::DoNotOptimize(g.get());
    state.PauseTiming();  // destruction is not part of building
    if (!check_size(state, *g, n)) break;
    g.reset();
    state.ResumeTiming();
  }
  set_items(state, n);
  GraphBytes bytes = measure_graph_bytes(n);
  state.counters["bytes_per_node"] =
      static_cast<double>(bytes.requested) / static_cast<double>(n);
  state.counters["heap_bytes_per_node"] =
      static_cast<double>(bytes.usable) / static_cast<double>(n);
}

void BM_Copy(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto g = make_graph(n);
  for (auto _ : state) {
    std::unique_ptr<Graph> copy = g->deepcopy();
    benchmark::DoNotOptimize(copy.get());
    state.PauseTiming();
    if (!check_size(state, *copy, n)) break;
    copy.reset();
    state.ResumeTiming();
  }
  set_items(state, n);
}

void BM_Print(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto g = make_graph(n);
  size_t bytes = 0;
  for (auto _ : state) {
    std::string text = g->str();
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  set_items(state, n);
  state.counters["text_bytes"] = static_cast<double>(bytes);
}

void BM_Codegen(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto g = make_graph(n);
  size_t bytes = 0;
  for (auto _ : state) {
    fx::PythonCode code = g->python_code("self");
    bytes = code.src.size();
    benchmark::DoNotOptimize(code.src.data());
  }
  set_items(state, n);
  state.counters["text_bytes"] = static_cast<double>(bytes);
}

void BM_Lint(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto g = make_graph(n);
  for (auto _ : state) {
    g->lint();
    benchmark::ClobberMemory();
  }
  set_items(state, n);
}

void BM_Edit(benchmark::State& state) {
  const int64_t n = state.range(0);
  for (auto _ : state) {
    state.PauseTiming();  // each pass starts from a fresh graph
    auto g = make_graph(n);
    state.ResumeTiming();
    edit_graph(*g);
    state.PauseTiming();
    if (!check_size(state, *g, n)) break;
    g.reset();
    state.ResumeTiming();
  }
  set_items(state, n);
}

void sizes(benchmark::internal::Benchmark* b) {
  b->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_Build)->Apply(sizes);
BENCHMARK(BM_Copy)->Apply(sizes);
BENCHMARK(BM_Print)->Apply(sizes);
BENCHMARK(BM_Codegen)->Apply(sizes);
BENCHMARK(BM_Lint)->Apply(sizes);
BENCHMARK(BM_Edit)->Apply(sizes);

// --dump_code=N / --dump_graph=N: print python_code() / str() of the N-node
// graph and exit (compare_ir.sh diffs them against torch.fx's).
bool dump(int argc, char** argv, int* status) {
  for (int i = 1; i < argc; ++i) {
    for (const char* flag : {"--dump_code=", "--dump_graph="}) {
      size_t len = std::strlen(flag);
      if (std::strncmp(argv[i], flag, len) != 0) continue;
      int64_t n = std::atoll(argv[i] + len);
      if (n < kFixedNodes) {
        std::fprintf(stderr, "%s needs N >= %lld\n", flag,
                     static_cast<long long>(kFixedNodes));
        *status = 2;
        return true;
      }
      auto g = make_graph(n);
      std::string text =
          flag[7] == 'c' ? g->python_code("self").src : g->str() + "\n";
      std::fwrite(text.data(), 1, text.size(), stdout);
      *status = 0;
      return true;
    }
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  int status = 0;
  if (dump(argc, argv, &status)) return status;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
