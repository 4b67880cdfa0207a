// The lifetime of what a plugin's handles name: the graphs a plugin created
// and released (kept, marked, until free_released_graphs), and the checks
// that refuse a released graph or an erased node (live_graph, live_node).
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "host/capi/api_internal.h"
#include "host/capi/c_api.h"
#include "host/handles/wrap.h"

namespace fx::host {
namespace internal {

// ------------------------------------------- released graphs, erased nodes

namespace {

struct GraphsOfPlugins {
  std::mutex mutex;
  absl::flat_hash_set<const Graph*> created;  // by CreateGraph, not freed
  absl::flat_hash_set<const Graph*> released;
  std::atomic<size_t> num_released{0};  // read without the lock
};

GraphsOfPlugins& graphs_of_plugins() {
  static auto* graphs = new GraphsOfPlugins();
  return *graphs;
}

}  // namespace

void note_created_graph(Graph* g) {
  GraphsOfPlugins& all = graphs_of_plugins();
  std::lock_guard<std::mutex> lock(all.mutex);
  all.created.insert(g);
}

// Only a graph from CreateGraph is released, once; any other is left alone.
void release_graph(Graph* g) {
  GraphsOfPlugins& all = graphs_of_plugins();
  std::lock_guard<std::mutex> lock(all.mutex);
  if (all.created.count(g) == 0 || !all.released.insert(g).second) return;
  all.num_released.store(all.released.size(), std::memory_order_release);
}

bool is_released(const Graph* g) {
  GraphsOfPlugins& all = graphs_of_plugins();
  if (all.num_released.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard<std::mutex> lock(all.mutex);
  return all.released.count(g) > 0;
}

namespace {
[[noreturn]] void fail_released() {
  fail(FX_FAILED_PRECONDITION,
       "the graph was released (ReleaseGraph); it and its nodes can no longer "
       "be used");
}
}  // namespace

Graph* live_graph(FxGraph* g) {
  Graph* graph = require(unwrap(g), "graph");
  if (is_released(graph)) fail_released();
  return graph;
}

const Graph* live_graph(const FxGraph* g) {
  const Graph* graph = require(unwrap(g), "graph");
  if (is_released(graph)) fail_released();
  return graph;
}

Node* live_node(FxNode* n, const char* what) {
  return const_cast<Node*>(live_node(static_cast<const FxNode*>(n), what));
}

const Node* live_node(const FxNode* n, const char* what) {
  const Node* node = require(unwrap(n), what);
  if (is_released(node->graph())) fail_released();
  if (node->erased()) {
    fail(FX_FAILED_PRECONDITION,
         cat(what, " '", node->name(),
             "' was erased; an erased node can only be read"));
  }
  return node;
}

}  // namespace internal

void free_released_graphs() {
  internal::GraphsOfPlugins& all = internal::graphs_of_plugins();
  std::lock_guard<std::mutex> lock(all.mutex);
  for (const Graph* g : all.released) {
    all.created.erase(g);
    delete g;
  }
  all.released.clear();
  all.num_released.store(0, std::memory_order_release);
}

}  // namespace fx::host
