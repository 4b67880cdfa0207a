// accelerator_partition's latency and cost model, partitioner_utils': a
// partition's latency, the transfer between partitions and the critical
// path of the partitioned graph.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/optimization/accelerator_partition.h"

namespace fx_optimization {

using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

// ----------------------------------------------------------- latency

const NodeLatency& latency_of(const GraphInfo& g, const Latencies& l, int v) {
  if (!l[v]) {
    refuse_graph("node '" + g.name(v) +
                 "' has no latency in option 'node_to_latency_mapping' "
                 "(torch raises KeyError)");
  }
  return *l[v];
}

// get_latency_of_one_partition: the longest path (by max(computer, mem)
// per node) from a top node to a bottom node, summed along the path as
// torch's depth-first search sums it.
PartitionLatency latency_of_partition(const GraphInfo& g, const Latencies& l,
                                      const Partition& p) {
  std::map<int, PartitionLatency> prefix;
  PartitionLatency critical;
  for (int v : p.nodes) {
    if (g.is_input(v)) continue;
    bool has_best = false;
    PartitionLatency best;
    for (int u : g.inputs[v]) {
      auto it = prefix.find(u);
      if (it == prefix.end()) continue;
      if (!has_best ||
          it->second.overall_latency_sec > best.overall_latency_sec) {
        best = it->second;
        has_best = true;
      }
    }
    const NodeLatency& nl = latency_of(g, l, v);
    PartitionLatency here{
        best.mem_latency_sec + nl.mem_latency_sec,
        best.computer_latency_sec + nl.computer_latency_sec,
        best.overall_latency_sec +
            std::max(nl.computer_latency_sec, nl.mem_latency_sec)};
    prefix[v] = here;
    const bool bottom =
        std::none_of(g.users[v].begin(), g.users[v].end(),
                     [&](int w) { return p.nodes.count(w) > 0; });
    if (bottom && here.overall_latency_sec > critical.overall_latency_sec) {
      critical = here;
    }
  }
  return critical;
}

// get_comm_latency_between.
double comm_latency_between(const GraphInfo& g, const Partition& parent,
                            const Partition& child, double rate) {
  const auto& a = *parent.logical_device_ids;
  const auto& b = *child.logical_device_ids;
  if (!a.empty() && !b.empty() && a == b) return 0.0;
  int64_t comm_size = 0;
  std::set<int> visited;
  for (int v : child.nodes) {
    for (int u : g.inputs[v]) {
      if (parent.nodes.count(u) && visited.insert(u).second) {
        comm_size += g.output_size[u];
      }
    }
  }
  if (rate == 0) {
    refuse_graph("option 'transfer_rate_bytes_per_sec' is 0 and partitions " +
                 std::to_string(parent.partition_id) + " and " +
                 std::to_string(child.partition_id) +
                 " are on different devices: torch divides by it "
                 "(ZeroDivisionError)");
  }
  return static_cast<double>(comm_size) / rate;
}

// The partitions in an order where parents come first.
PartitionList topological(const PartitionList& ps) {
  std::map<Partition*, size_t> waiting;
  PartitionList order;
  for (Partition* p : ps) {
    waiting[p] = p->parents.size();
    if (p->parents.empty()) order.push_back(p);
  }
  for (size_t i = 0; i < order.size(); ++i) {
    for (Partition* c : order[i]->children) {
      if (--waiting[c] == 0) order.push_back(c);
    }
  }
  if (order.size() != ps.size()) {
    refuse_graph("the partitions depend on each other in a cycle");
  }
  return order;
}

// get_latency_of_partitioned_graph: the longest path of partitions, each
// step adding the partition's overall latency and the transfer to the
// next, summed along the path as torch's search sums it.
double latency_of_partitioned_graph(
    const GraphInfo& g, const PartitionList& ps,
    const std::map<Partition*, PartitionLatency>& latency, double rate) {
  std::map<Partition*, double> end;
  double critical = 0.0;
  for (Partition* p : topological(ps)) {
    double start = 0.0;
    bool first = true;
    for (Partition* q : p->parents) {
      const double via = end.at(q) + comm_latency_between(g, *q, *p, rate);
      if (first || via > start) start = via;
      first = false;
    }
    const double here = start + latency.at(p).overall_latency_sec;
    end[p] = here;
    if (p->children.empty() && here > critical) critical = here;
  }
  return critical;
}

std::map<Partition*, PartitionLatency> partition_to_latency_mapping(
    const GraphInfo& g, const Latencies& l, const PartitionList& ps) {
  std::map<Partition*, PartitionLatency> out;
  for (Partition* p : ps) out[p] = latency_of_partition(g, l, *p);
  return out;
}

double cost_of(const GraphInfo& g, const Latencies& l, const PartitionList& ps,
               double rate) {
  return latency_of_partitioned_graph(
      g, ps, partition_to_latency_mapping(g, l, ps), rate);
}

}  // namespace fx_optimization
