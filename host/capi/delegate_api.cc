// The FxApi entries of version 5 that delegate partitions to vendor
// backends: RegisterBackend (the process-wide table of backends) and
// GraphDelegatePartitions (fusion, then one DelegatedModule per partition,
// compiled before the graph changes).
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/partition/fuse_partitions.h"
#include "fx_core/runtime/graph_module.h"
#include "host/capi/api_internal.h"
#include "host/delegate/delegated_module.h"
#include "host/handles/wrap.h"

namespace fx::host::internal {
namespace {

struct Backends {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const Backend>> by_name;
};

Backends& backends() {
  static auto* b = new Backends();
  return *b;
}

void register_backend(FxRegistrar* r, const FxBackendInfo* info) {
  require(r, "registrar");
  require(info, "backend");
  if (info->struct_size < sizeof(FxBackendInfo)) {
    fail(FX_INVALID_ARGUMENT,
         cat("backend->struct_size is ", info->struct_size, ", expected ",
             sizeof(FxBackendInfo), " (sizeof(FxBackendInfo))"));
  }
  if (info->name == nullptr || *info->name == '\0' ||
      info->compile == nullptr || info->run == nullptr) {
    fail(FX_INVALID_ARGUMENT,
         cat("plugin '", registrar_plugin(r),
             "': a backend needs a name, compile and run"));
  }
  auto backend = std::make_shared<Backend>();
  backend->name = info->name;
  backend->plugin = registrar_plugin(r);
  backend->api_version = registrar_api_version(r);
  backend->table = api(backend->api_version);
  backend->info = *info;
  backend->info.name = nullptr;  // points into the plugin; `name` is ours
  Backends& all = backends();
  std::lock_guard<std::mutex> lock(all.mutex);
  auto [it, added] = all.by_name.emplace(backend->name, backend);
  if (!added) {
    fail(FX_FAILED_PRECONDITION,
         cat("plugin '", registrar_plugin(r), "' registers backend '",
             backend->name, "', which plugin '", it->second->plugin,
             "' registered"));
  }
}

std::shared_ptr<const Backend> find_backend(const std::string& name) {
  Backends& all = backends();
  std::lock_guard<std::mutex> lock(all.mutex);
  auto it = all.by_name.find(name);
  if (it != all.by_name.end()) return it->second;
  std::string known;
  for (const auto& [n, b] : all.by_name) {
    known += cat(known.empty() ? "" : ", ", n);
  }
  fail(FX_NOT_FOUND,
       cat("no backend '", name, "' is registered (",
           known.empty() ? "none is" : cat("registered: ", known), ")"));
}

// The partitions as nodes of `copy` (a deepcopy of their graph).
std::vector<std::vector<Node*>> mapped(
    const std::vector<std::vector<Node*>>& lists, const Graph::ValueMap& memo) {
  std::vector<std::vector<Node*>> out;
  for (const auto& list : lists) {
    std::vector<Node*>& nodes = out.emplace_back();
    for (const Node* n : list) nodes.push_back(memo.at(n));
  }
  return out;
}

// Fuses and compiles every partition on a copy of the graph (the module's
// attributes untouched), so that any failure leaves everything as it was;
// then fuses the graph itself, which gives the same children by the same
// names, and installs the compiled modules.
void delegate(FxGraph* g, const FxPartitions* partitions, const char* backend,
              const char* prefix) {
  Graph& graph = *live_graph(g);
  std::shared_ptr<const Backend> b = find_backend(require(backend, "backend"));
  GraphModule& gm = owning_module(&graph);
  std::string p = prefix ? prefix : cat(backend, "_");
  std::vector<std::vector<Node*>> lists =
      checked_partition_lists(gm, partitions, p);
  Graph::ValueMap memo;
  std::unique_ptr<Graph> copy = graph.deepcopy(&memo);
  std::vector<FusedSubgraph> trial =
      fuse_by_partitions(*copy, mapped(lists, memo), p);
  std::vector<std::pair<std::string, std::shared_ptr<DelegatedModule>>> made;
  for (FusedSubgraph& f : trial) {
    auto child = std::make_shared<GraphModule>(gm, std::move(f.graph), f.name);
    made.emplace_back(f.name,
                      std::make_shared<DelegatedModule>(b, f.name, child));
  }
  fuse_by_partitions(graph, lists, p);
  for (auto& [name, module] : made) gm.add_submodule(name, std::move(module));
}

}  // namespace

void fill_delegate_entries(FxApi& t) {
  t.RegisterBackend = [](FxRegistrar* r, const FxBackendInfo* info) {
    return guarded("RegisterBackend", [&] { register_backend(r, info); });
  };
  t.GraphDelegatePartitions = [](FxGraph* g, const FxPartitions* partitions,
                                 const char* backend, const char* prefix) {
    return guarded("GraphDelegatePartitions",
                   [&] { delegate(g, partitions, backend, prefix); });
  };
}

}  // namespace fx::host::internal
