// accelerator_partition's partition model and DAG: the graph as the
// partitioner reads it, partitioner_utils.Partition's node and memory
// bookkeeping, parents and children, BFS levels, the dependency check, and
// the placement of partitions on devices.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/optimization/accelerator_partition.h"

namespace fx_optimization {

using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

GraphInfo read_graph(const Graph& g, bool by_name) {
  GraphInfo info;
  info.index.reserve(g.size());
  for (Node n : g) {
    const FxOpcode op = n.op();
    if (op == FX_OP_OUTPUT) break;
    const int v = static_cast<int>(info.nodes.size());
    info.index.emplace(n.get(), v);
    if (by_name) info.by_name[std::string(n.name())] = v;
    info.nodes.push_back(n);
    info.op.push_back(op);
    ArgView size = n.meta("size_bytes");
    info.output_size.push_back(size[0].as_int());
    info.total_size.push_back(size[1].as_int());
  }
  const size_t count = info.nodes.size();
  info.inputs.resize(count);
  info.users.resize(count);
  const FxApi* api = fxp::api();
  for (size_t v = 0; v < count; ++v) {
    FxNode* n = info.nodes[v].get();
    const size_t num_inputs = api->NodeNumInputs(n);
    for (size_t i = 0; i < num_inputs; ++i) {
      auto it = info.index.find(api->NodeInput(n, i));
      if (it == info.index.end()) {
        refuse_graph("node '" + info.name(static_cast<int>(v)) +
                     "' reads a node after the output");
      }
      info.inputs[v].push_back(it->second);
      info.users[it->second].push_back(static_cast<int>(v));
    }
  }
  return info;
}

// ----------------------------------------------------------- partitions

// get_extra_size_of(node, nodes).
int64_t extra_size_of(const GraphInfo& g, int v, const std::set<int>& nodes) {
  int64_t size = g.total_size[v];
  for (int u : g.inputs[v]) {
    if (!nodes.count(u)) size += g.output_size[u];
  }
  return size;
}

void recalculate_mem_size(const GraphInfo& g, Partition& p) {
  p.used_mem_bytes = 0;
  for (int v : p.nodes) p.used_mem_bytes += extra_size_of(g, v, p.nodes);
}

// Partition.add_node: the node and its placeholder / get_attr inputs; the
// size is updated by what changed (recalculate_mem_size's value).
void add_node(const GraphInfo& g, Partition& p, int v) {
  std::vector<int> added;  // v and the placeholders / get_attrs it reads
  for (int u : g.inputs[v]) {
    if (g.is_input(u) && p.nodes.insert(u).second) added.push_back(u);
  }
  if (p.nodes.insert(v).second) added.push_back(v);
  for (int y : added) {
    p.used_mem_bytes += extra_size_of(g, y, p.nodes);
    for (int w : g.users[y]) {
      if (p.nodes.count(w) &&
          std::find(added.begin(), added.end(), w) == added.end()) {
        p.used_mem_bytes -= g.output_size[y];
      }
    }
  }
}

// Partition.remove_node.
void remove_node(const GraphInfo& g, Partition& p, int v) {
  if (!p.nodes.erase(v)) return;
  for (int u : g.inputs[v]) {
    const bool unused =
        std::none_of(g.users[u].begin(), g.users[u].end(),
                     [&](int w) { return p.nodes.count(w) > 0; });
    if (unused && g.is_input(u)) p.nodes.erase(u);
  }
  recalculate_mem_size(g, p);
}

// set_parents_and_children.
void set_parents_and_children(const GraphInfo& g, const PartitionList& ps) {
  // The partitions holding each node, by node index (offsets into `held`).
  std::vector<size_t> first(g.nodes.size() + 1, 0);
  for (Partition* p : ps) {
    p->parents.clear();
    p->children.clear();
    for (int v : p->nodes) ++first[v + 1];
  }
  for (size_t v = 0; v < g.nodes.size(); ++v) first[v + 1] += first[v];
  std::vector<Partition*> held(first.back());
  std::vector<size_t> next(first.begin(), first.end() - 1);
  for (Partition* p : ps) {
    for (int v : p->nodes) held[next[v]++] = p;
  }
  for (Partition* p : ps) {
    for (int v : p->nodes) {
      for (int u : g.users[v]) {
        for (size_t k = first[u]; k < first[u + 1]; ++k) {
          Partition* q = held[k];
          if (q != p && !q->nodes.count(v)) {
            p->children.insert(q);
            q->parents.insert(p);
          }
        }
      }
    }
  }
}

void reorganize_partitions(const GraphInfo& g, const PartitionList& ps) {
  for (size_t i = 0; i < ps.size(); ++i) {
    ps[i]->partition_id = static_cast<int64_t>(i);
  }
  set_parents_and_children(g, ps);
}

void reset_partition_device(const PartitionList& ps) {
  for (Partition* p : ps) {
    p->logical_device_ids = std::make_shared<std::vector<int64_t>>();
  }
}

// get_bfs_level_partition; torch loops forever on a cycle.
void get_bfs_level_partition(const PartitionList& ps) {
  std::set<Partition*> current, next;
  for (Partition* p : ps) {
    if (p->parents.empty()) current.insert(p);
  }
  int64_t level = 0;
  while (!current.empty()) {
    if (level > static_cast<int64_t>(ps.size())) {
      refuse_graph(
          "the partitions depend on each other in a cycle (torch's "
          "get_bfs_level_partition never ends)");
    }
    for (Partition* p : current) {
      p->bfs_level = level;
      next.insert(p->children.begin(), p->children.end());
    }
    current.swap(next);
    next.clear();
    ++level;
  }
}

// check_dependency: whether `p` reaches itself through its children.
bool check_dependency(Partition* p) {
  std::set<Partition*> visited{p};
  std::vector<Partition*> queue{p};
  for (size_t i = 0; i < queue.size(); ++i) {
    for (Partition* child : queue[i]->children) {
      if (child == p) return true;
      if (visited.insert(child).second) queue.push_back(child);
    }
  }
  return false;
}

void remove_from(PartitionList& ps, Partition* p) {
  ps.erase(std::find(ps.begin(), ps.end(), p));
}

// combine_two_partitions: their union appended to `ps`, both removed.
void combine_two_partitions(Partitions& owner, const GraphInfo& g,
                            Partition* p0, Partition* p1, PartitionList& ps) {
  Partition* p = owner.make(static_cast<int64_t>(ps.size()));
  p->nodes = p0->nodes;
  p->nodes.insert(p1->nodes.begin(), p1->nodes.end());
  recalculate_mem_size(g, *p);
  ps.push_back(p);
  remove_from(ps, p0);
  remove_from(ps, p1);
  reorganize_partitions(g, ps);
}

// ----------------------------------------------------------- devices

// get_logical_id_to_device: the last device with each id.
std::map<int64_t, size_t> logical_id_to_device(
    const std::vector<Device>& devices) {
  std::map<int64_t, size_t> out;
  for (size_t d = 0; d < devices.size(); ++d) out[devices[d].logical_id] = d;
  return out;
}

DeviceStats get_device_partition_stats(const PartitionList& ps,
                                       const std::vector<Device>& devices) {
  const std::map<int64_t, size_t> by_id = logical_id_to_device(devices);
  DeviceStats s;
  s.device_to_partitions.resize(devices.size());
  for (const Device& d : devices) {
    s.device_to_left_mem_bytes.push_back(d.available_mem_bytes);
  }
  for (Partition* p : ps) {
    if (p->logical_device_ids->empty()) {
      s.no_device_partitions.push_back(p);
      continue;
    }
    for (int64_t id : *p->logical_device_ids) {
      auto it = by_id.find(id);
      if (it == by_id.end()) {
        refuse_graph("partition " + std::to_string(p->partition_id) +
                     " is on logical device " + std::to_string(id) +
                     ", which no device of option 'devices' has");
      }
      s.device_to_partitions[it->second].push_back(p);
      s.device_to_left_mem_bytes[it->second] -= p->used_mem_bytes;
    }
  }
  return s;
}

// calculate_extra_mem_bytes_needed_for.
int64_t extra_mem_bytes_needed_for(const GraphInfo& g, const Partition& p,
                                   const PartitionList& on_device) {
  std::set<int> all_nodes;
  for (Partition* q : on_device)
    all_nodes.insert(q->nodes.begin(), q->nodes.end());
  if (all_nodes.empty()) return p.used_mem_bytes;
  all_nodes.insert(p.nodes.begin(), p.nodes.end());
  int64_t extra = 0;
  for (int v : p.nodes) extra += extra_size_of(g, v, all_nodes);
  return extra;
}

// get_device_to_partitions_mapping: each partition without a device on the
// device with the least memory left that has more than it needs.
bool get_device_to_partitions_mapping(const GraphInfo& g,
                                      const PartitionList& ps,
                                      const std::vector<Device>& devices) {
  DeviceStats s = get_device_partition_stats(ps, devices);
  std::vector<size_t> order(devices.size());
  for (size_t d = 0; d < order.size(); ++d) order[d] = d;
  for (Partition* p : s.no_device_partitions) {
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return s.device_to_left_mem_bytes[a] < s.device_to_left_mem_bytes[b];
    });
    bool found = false;
    for (size_t d : order) {
      const int64_t extra =
          extra_mem_bytes_needed_for(g, *p, s.device_to_partitions[d]);
      if (extra < s.device_to_left_mem_bytes[d]) {
        s.device_to_partitions[d].push_back(p);
        p->logical_device_ids->push_back(devices[d].logical_id);
        s.device_to_left_mem_bytes[d] -= extra;
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

}  // namespace fx_optimization
