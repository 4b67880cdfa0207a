// accelerator_partition's Partitioner.partition_graph and its modes:
// the single partition, size_based, sparse_nn, cost_aware, kl_based,
// aot_based and saturate_host.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/optimization/accelerator_partition.h"

namespace fx_optimization {

using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Whether torch's try_combining_partitions returns inf for the pair before
// it changes anything: partitions more than one BFS level apart that are
// not each other's parent or child.
bool never_combined(Partition* p0, const Partition* p1) {
  return std::abs(p0->bfs_level - p1->bfs_level) > 1 &&
         !p1->parents.count(p0) && !p1->children.count(p0);
}

}  // namespace

void Partitioner::partition_graph() {
  const bool any_op = std::any_of(g_.op.begin(), g_.op.end(), [](FxOpcode o) {
    return o != FX_OP_PLACEHOLDER && o != FX_OP_GET_ATTR;
  });
  if (!any_op) refuse_graph("No Partition since no operations in the module");
  int64_t total = 0, sum_of_devices = 0;
  for (int64_t s : g_.total_size) total += s;
  const Device* max_device = &c_.devices[0];
  for (const Device& d : c_.devices) {
    sum_of_devices += d.available_mem_bytes;
    if (d.available_mem_bytes > max_device->available_mem_bytes) {
      max_device = &d;
    }
  }
  if (c_.mode == Mode::kAotBased) {
    aot_based_partition();
  } else if (total <= max_device->available_mem_bytes) {
    find_single_partition(total, max_device->logical_id);
  } else if (total > sum_of_devices) {
    refuse_graph("Devices have no enough memory for the module (it needs " +
                 std::to_string(total) + " bytes, the devices have " +
                 std::to_string(sum_of_devices) + ")");
  } else if (c_.mode == Mode::kSparseNn) {
    const int64_t available = c_.devices[0].available_mem_bytes;
    for (const Device& d : c_.devices) {
      if (d.available_mem_bytes != available) {
        refuse_graph(
            "All devices must have same memory size! (mode "
            "sparse_nn)");
      }
    }
    sparse_nn_partition(available);
  } else if (c_.mode == Mode::kCostAware) {
    cost_aware_partition();
  } else if (c_.mode == Mode::kKlBased) {
    kl_based_partition();
  } else {
    size_based_partition();
  }
  if (c_.saturate_host) saturate_host();
}

void Partitioner::find_single_partition(int64_t total, int64_t logical_id) {
  Partition* p = owner_.create_partition();
  for (size_t v = 0; v < g_.nodes.size(); ++v) {
    p->nodes.insert(static_cast<int>(v));
  }
  p->used_mem_bytes = total;
  p->logical_device_ids->push_back(logical_id);
  map_nodes_to_partitions();
}

size_t Partitioner::find_device_based_on_size(int v,
                                              std::vector<size_t>& occupied) {
  const int64_t needed = extra_size_of(g_, v, {});
  for (size_t d = 0; d < c_.devices.size(); ++d) {
    if (std::find(occupied.begin(), occupied.end(), d) == occupied.end() &&
        c_.devices[d].available_mem_bytes >= needed) {
      occupied.push_back(d);
      return d;
    }
  }
  refuse_graph(g_.name(v) + "is too large to fit any device (node '" +
               g_.name(v) + "' needs " + std::to_string(needed) + " bytes)");
}

void Partitioner::size_based_partition() {
  std::map<Partition*, int64_t> left;
  std::vector<size_t> occupied;
  Partition* p = owner_.create_partition();
  const size_t num_devices = c_.devices.size();
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    const int v = static_cast<int>(i);
    if (!g_.is_call(v)) continue;
    if (owner_.list.size() > num_devices) {
      create_single_node_partition(v);
      continue;
    }
    int64_t needed = extra_size_of(g_, v, p->nodes);
    if (p->used_mem_bytes == 0) {
      const size_t d = find_device_based_on_size(v, occupied);
      occupied.push_back(d);  // torch appends it twice
      left[p] = c_.devices[d].available_mem_bytes;
      p->logical_device_ids->push_back(c_.devices[d].logical_id);
    } else if (left[p] < needed) {
      if (owner_.list.size() == num_devices) {
        create_single_node_partition(v);
        continue;
      }
      const size_t d = find_device_based_on_size(v, occupied);
      p = owner_.create_partition();
      needed = extra_size_of(g_, v, p->nodes);
      left[p] = c_.devices[d].available_mem_bytes;
      p->logical_device_ids->push_back(c_.devices[d].logical_id);
    }
    add_node(g_, *p, v);
    left[p] -= needed;
  }
  reorganize_partitions(g_, owner_.list);
  map_nodes_to_partitions();
  if (!map_devices()) {
    refuse_graph("Cannot Get a Valid Partition to Logical Device Mapping");
  }
}

void Partitioner::saturate_host() {
  DeviceStats s = get_device_partition_stats(owner_.list, c_.devices);
  if (!s.no_device_partitions.empty()) {
    refuse_graph("saturate_host: partition " +
                 std::to_string(s.no_device_partitions[0]->partition_id) +
                 " has no device (torch asserts every partition has one)");
  }
  const size_t count = c_.devices.size();
  std::vector<size_t> used;
  for (size_t d = 0; d < count; ++d) {
    if (!s.device_to_partitions[d].empty()) used.push_back(d);
  }
  std::vector<std::pair<size_t, size_t>> replicated;  // replica, original
  std::set<size_t> taken(used.begin(), used.end());
  while (!used.empty() && used.size() * 2 + replicated.size() <= count) {
    std::vector<size_t> idle;
    for (size_t d = 0; d < count; ++d) {
      if (!taken.count(d)) idle.push_back(d);
    }
    std::vector<std::pair<size_t, size_t>> round;
    for (size_t u : used) {
      const int64_t needed =
          c_.devices[u].available_mem_bytes - s.device_to_left_mem_bytes[u];
      auto best = idle.end();
      for (auto it = idle.begin(); it != idle.end(); ++it) {
        if (c_.devices[*it].available_mem_bytes < needed) continue;
        if (best == idle.end() || c_.devices[*it].available_mem_bytes <
                                      c_.devices[*best].available_mem_bytes) {
          best = it;
        }
      }
      if (best == idle.end()) {
        round.clear();
        break;
      }
      round.emplace_back(*best, u);
      idle.erase(best);
    }
    if (round.empty()) break;
    for (const auto& r : round) taken.insert(r.first);
    replicated.insert(replicated.end(), round.begin(), round.end());
  }
  for (const auto& [replica, original] : replicated) {
    for (Partition* p : s.device_to_partitions[original]) {
      p->logical_device_ids->push_back(c_.devices[replica].logical_id);
    }
  }
}

// ------------------------------------------------------------ sparse_nn

// is_embedding_node: a call_module whose target, or a module on the way
// to it, prints with "Embedding" in its text (torch's str(submodule),
// which includes its children: here a module whose type, or the type of a
// module holding one of its parameters, names Embedding).
bool Partitioner::is_embedding_node(int v) {
  if (g_.op[v] != FX_OP_CALL_MODULE) return false;
  const std::string target(g_.nodes[v].target());
  std::string prefix;
  for (const std::string& atom : split_text(target, '.')) {
    prefix += (prefix.empty() ? "" : ".") + atom;
    auto found = embedding_prefix_.find(prefix);
    if (found == embedding_prefix_.end()) {
      bool embedding = graph_.module_type(prefix.c_str()).find("Embedding") !=
                       std::string::npos;
      for (const fxp::ModuleParameter& param :
           fxp::module_parameters(graph_, prefix.c_str())) {
        // Qualified from the root: the modules on its way hold it.
        std::vector<std::string> parts = split_text(param.name, '.');
        std::string path;
        for (size_t k = 0; k + 1 < parts.size() && !embedding; ++k) {
          path += (k == 0 ? "" : ".") + parts[k];
          embedding = path.size() > prefix.size() &&
                      graph_.module_type(path.c_str()).find("Embedding") !=
                          std::string::npos;
        }
      }
      found = embedding_prefix_.emplace(prefix, embedding).first;
    }
    if (found->second) return true;
  }
  return false;
}

void Partitioner::sparse_nn_partition(int64_t available) {
  PartitionList embedding, others;
  bool in_embedding = false;
  Partition* p = owner_.create_partition();
  auto reset = [&](bool fresh) {
    (in_embedding ? embedding : others).push_back(p);
    if (fresh) p = owner_.create_partition();
  };
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    const int v = static_cast<int>(i);
    if (!g_.is_call(v)) continue;
    if (is_embedding_node(v) != in_embedding) {
      if (p->used_mem_bytes != 0) reset(true);
      in_embedding = !in_embedding;
    }
    int64_t needed = extra_size_of(g_, v, p->nodes);
    if (needed + p->used_mem_bytes > available) {
      reset(true);
      needed = extra_size_of(g_, v, p->nodes);
      if (needed > available) {
        refuse_graph(std::string(g_.nodes[v].target()) +
                     "is too large to fit into a device (node '" + g_.name(v) +
                     "')");
      }
    }
    add_node(g_, *p, v);
  }
  reset(false);
  if (embedding.empty() || others.empty()) {
    refuse_graph(std::string("mode sparse_nn needs embedding nodes and "
                             "others; the graph has no ") +
                 (embedding.empty() ? "embedding" : "non-embedding") +
                 " nodes (torch's sparse_nn_partition fails: IndexError)");
  }
  set_parents_and_children(g_, owner_.list);
  combine_partitions_based_on_size(others, available);
  combine_partitions_based_on_size(embedding, available);
  place_sparse_nn_partitions(embedding, others, available);
  map_nodes_to_partitions();
}

// combine_partitions_based_on_size: the smallest partition joins the
// largest within one BFS level that it fits with, until none does.
void Partitioner::combine_partitions_based_on_size(PartitionList& ps,
                                                   int64_t available) {
  bool found = true;
  while (found) {
    PartitionList sorted = ps;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](Partition* a, Partition* b) {
                       return a->used_mem_bytes < b->used_mem_bytes;
                     });
    get_bfs_level_partition(owner_.list);
    found = false;
    Partition* smallest = sorted.front();
    for (size_t k = sorted.size(); k-- > 1;) {
      Partition* q = sorted[k];
      if (std::abs(smallest->bfs_level - q->bfs_level) > 1) continue;
      std::set<int> nodes = q->nodes;
      nodes.insert(smallest->nodes.begin(), smallest->nodes.end());
      int64_t needed = 0;
      for (int v : nodes) needed += extra_size_of(g_, v, nodes);
      if (needed > available) continue;
      combine_two_partitions(owner_, g_, q, smallest, owner_.list);
      remove_from(ps, smallest);
      remove_from(ps, q);
      ps.push_back(owner_.list.back());
      found = true;
      break;
    }
  }
}

void Partitioner::place_sparse_nn_partitions(const PartitionList& embedding,
                                             const PartitionList& others,
                                             int64_t available) {
  int64_t others_size = 0;
  for (Partition* p : others) others_size += p->used_mem_bytes;
  if (embedding.size() > c_.devices.size()) {
    refuse_graph("Need " + std::to_string(embedding.size()) +
                 " devices, but only " + std::to_string(c_.devices.size()) +
                 " provided");
  }
  auto occupied = std::make_shared<std::vector<int64_t>>();
  for (size_t i = 0; i < embedding.size(); ++i) {
    Partition* p = embedding[i];
    if (others_size + p->used_mem_bytes > available) {
      refuse_graph("partition_" + std::to_string(p->partition_id) +
                   "(embedding partition) and non embedding partitions can "
                   "not fit into one device");
    }
    p->logical_device_ids =
        std::make_shared<std::vector<int64_t>>(1, c_.devices[i].logical_id);
    occupied->push_back(c_.devices[i].logical_id);
  }
  for (Partition* p : others) p->logical_device_ids = occupied;
}

// ----------------------------------------------------------- cost_aware

// try_combining_partitions on a copy of the list (the partitions it holds
// are shared with torch's self.partitions and changed as torch changes
// them), for a pair that passes never_combined.
double Partitioner::try_combining_partitions(size_t i, size_t j,
                                             PartitionList ps) {
  Partition* p0 = ps[i];
  Partition* p1 = ps[j];
  combine_two_partitions(owner_, g_, p0, p1, ps);
  if (check_dependency(ps.back())) return kInf;
  reset_partition_device(ps);
  if (!get_device_to_partitions_mapping(g_, ps, c_.devices)) return kInf;
  return cost(ps);
}

bool Partitioner::search_combination() {
  double best = cost(owner_.list);
  if (owner_.list.size() == 1) return false;
  // torch copies the list and reorganizes the partitions after every pair;
  // a pair never_combined changes nothing, so neither is done for it (the
  // same partitions, ids and links: a round was quartic in the partitions).
  std::vector<size_t> pair;
  for (size_t i = 0; i + 1 < owner_.list.size(); ++i) {
    for (size_t j = i + 1; j < owner_.list.size(); ++j) {
      if (never_combined(owner_.list[i], owner_.list[j])) continue;
      const double new_cost = try_combining_partitions(i, j, owner_.list);
      if (new_cost <= best) {
        pair = {i, j};
        best = new_cost;
      }
      reorganize_partitions(g_, owner_.list);
    }
  }
  if (!pair.empty()) {
    combine_two_partitions(owner_, g_, owner_.list[pair[0]],
                           owner_.list[pair[1]], owner_.list);
  }
  get_bfs_level_partition(owner_.list);
  reset_partition_device(owner_.list);
  map_devices();
  return !pair.empty();
}

void Partitioner::cost_aware_partition() {
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    if (g_.is_call(static_cast<int>(i))) {
      create_single_node_partition(static_cast<int>(i));
    }
  }
  set_parents_and_children(g_, owner_.list);
  get_bfs_level_partition(owner_.list);
  while (search_combination()) {
  }
  reorganize_partitions(g_, owner_.list);
  map_nodes_to_partitions();
}

// ------------------------------------------------------------- kl_based

// swap_nodes; -1 is torch's None.
void Partitioner::swap_nodes(int n0, int n1, Partition* p0, Partition* p1) {
  if (n0 >= 0) {
    remove_node(g_, *p0, n0);
    add_node(g_, *p1, n0);
  }
  if (n1 >= 0) {
    add_node(g_, *p0, n1);
    remove_node(g_, *p1, n1);
  }
}

double Partitioner::try_swap_nodes(int n0, int n1, Partition* p0,
                                   Partition* p1) {
  double result = kInf;
  swap_nodes(n0, n1, p0, p1);
  reorganize_partitions(g_, owner_.list);
  if (!check_dependency(p0) && !check_dependency(p1)) {
    reset_partition_device(owner_.list);
    auto latency = partition_to_latency_mapping(g_, latencies_, owner_.list);
    if (map_devices()) {
      result = latency_of_partitioned_graph(g_, owner_.list, latency,
                                            c_.transfer_rate_bytes_per_sec);
    }
  }
  swap_nodes(n1, n0, p0, p1);
  reorganize_partitions(g_, owner_.list);
  reset_partition_device(owner_.list);
  map_devices();
  return result;
}

// swap_node_to_partition: returns, as torch does, the cost of the last
// try (moving `v` alone) and the pair of the cheapest.
std::pair<double, std::pair<int, int>> Partitioner::swap_node_to_partition(
    int v, Partition* p0, Partition* p1) {
  std::vector<int> candidates(p1->nodes.begin(), p1->nodes.end());
  candidates.push_back(-1);
  double min_cost = kInf, last = kInf;
  std::pair<int, int> pair{-2, -2};
  for (int n1 : candidates) {
    if (n1 >= 0 && g_.is_input(n1)) continue;
    last = try_swap_nodes(v, n1, p0, p1);
    if (last < min_cost) {
      pair = {v, n1};
      min_cost = last;
    }
  }
  return {last, pair};
}

// kl_based_partition as torch 1.13 does it (option kl_as_torch), its bugs
// kept: node_to_partition is never updated after a swap, so a node's p0 can
// be a partition it has left and the split stays size_based's (the swaps
// change only the partitions' nodes and devices); swap_node_to_partition's
// cost is its last try's; the best pair is never reset, so every later node
// re-applies the last improving swap.
void Partitioner::kl_based_as_torch() {
  size_based_partition();
  double best = cost(owner_.list);
  std::pair<int, int> node_pair{-2, -2};
  std::pair<Partition*, Partition*> partition_pair{nullptr, nullptr};
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    const int v = static_cast<int>(i);
    if (g_.is_input(v)) continue;
    const size_t p0_index = static_cast<size_t>(node_to_partition_.at(v));
    Partition* p0 = owner_.list.at(p0_index);
    for (size_t p1_index = 0; p1_index < owner_.list.size(); ++p1_index) {
      if (p1_index == p0_index) continue;
      Partition* p1 = owner_.list[p1_index];
      auto [new_cost, new_pair] = swap_node_to_partition(v, p0, p1);
      if (new_cost < best) {
        best = new_cost;
        node_pair = new_pair;
        partition_pair = {p0, p1};
      }
    }
    if (node_pair.first != -2) {
      swap_nodes(node_pair.first, node_pair.second, partition_pair.first,
                 partition_pair.second);
      reorganize_partitions(g_, owner_.list);
      map_devices();
    }
  }
  reorganize_partitions(g_, owner_.list);
  map_devices();
}

namespace {

bool holds_ops(const GraphInfo& g, const Partition& p) {
  return std::any_of(p.nodes.begin(), p.nodes.end(),
                     [&](int v) { return !g.is_input(v); });
}

}  // namespace

// kl_based (fixed): size_based, then for each op node in graph order its
// cheapest move out of the partition now holding it (into another
// partition, swapped with one of that partition's op nodes or alone),
// applied when it lowers the critical path's latency. The split, ids,
// parents, children, BFS levels and devices follow the partitions as they
// end up. With kl_as_torch, torch 1.13's loop instead.
void Partitioner::kl_based_partition() {
  if (c_.kl_as_torch) {
    kl_based_as_torch();
    return;
  }
  size_based_partition();
  read_by_output_.assign(g_.nodes.size(), false);
  for (const Node& n : graph_.output_node().all_input_nodes()) {
    read_by_output_[g_.index.at(n.get())] = true;
  }
  double current = cost(owner_.list);
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    const int v = static_cast<int>(i);
    if (g_.is_input(v)) continue;
    Partition* p0 = holder_of(v);
    const Move move = best_move(v, p0, current);
    if (move.p1 == nullptr) continue;
    apply_move(v, p0, move);
    current = cost(owner_.list);
  }
  map_nodes_to_partitions();
  get_bfs_level_partition(owner_.list);
}

// The partition holding op node `v` (each op node is in exactly one).
Partition* Partitioner::holder_of(int v) const {
  for (Partition* p : owner_.list) {
    if (p->nodes.count(v)) return p;
  }
  refuse_graph("kl_based: node '" + g_.name(v) + "' is in no partition");
}

// Whether a node of `p` is read outside it (by another partition or the
// output): split_module fails on a partition without (IndexError).
bool Partitioner::has_result(const Partition& p) const {
  return std::any_of(p.nodes.begin(), p.nodes.end(), [&](int v) {
    return !g_.is_input(v) &&
           (read_by_output_[v] ||
            std::any_of(g_.users[v].begin(), g_.users[v].end(),
                        [&](int w) { return !p.nodes.count(w); }));
  });
}

// The critical path's latency with op node `v` moved from p0 to p1 and
// `n1` (unless -1) from p1 to p0, over the partitions then holding op
// nodes, devices mapped afresh; inf if p0 or p1 then depends on itself
// (a cycle) or has no result (split_module could not split it), or some
// partition finds no device. Everything is restored afterwards, devices
// included.
double Partitioner::try_move(int v, int n1, Partition* p0, Partition* p1) {
  std::vector<std::shared_ptr<std::vector<int64_t>>> devices;
  for (Partition* p : owner_.list) devices.push_back(p->logical_device_ids);
  swap_nodes(v, n1, p0, p1);
  PartitionList live;
  for (Partition* p : owner_.list) {
    if (holds_ops(g_, *p)) live.push_back(p);
  }
  reorganize_partitions(g_, live);  // an emptied p0's links are stale
  double result = kInf;
  const bool p0_live = holds_ops(g_, *p0);
  const bool splittable =
      !(p0_live && (check_dependency(p0) || !has_result(*p0))) &&
      !check_dependency(p1) && has_result(*p1);
  if (splittable) {
    reset_partition_device(live);
    if (get_device_to_partitions_mapping(g_, live, c_.devices)) {
      result = cost(live);
    }
  }
  swap_nodes(n1, v, p0, p1);
  reorganize_partitions(g_, owner_.list);
  for (size_t k = 0; k < devices.size(); ++k) {
    owner_.list[k]->logical_device_ids = devices[k];
  }
  return result;
}

// The cheapest move of op node `v` out of p0 (try_move into each other
// partition in list order, with each of its op nodes in graph order, then
// alone) costing less than `current`; the first of equal costs. p1 is null
// when none does.
Partitioner::Move Partitioner::best_move(int v, Partition* p0, double current) {
  Move best{current, -1, nullptr};
  for (Partition* p1 : owner_.list) {
    if (p1 == p0) continue;
    std::vector<int> candidates;
    for (int n : p1->nodes) {
      if (!g_.is_input(n)) candidates.push_back(n);
    }
    candidates.push_back(-1);
    for (int n1 : candidates) {
      const double c = try_move(v, n1, p0, p1);
      if (c < best.cost) best = {c, n1, p1};
    }
  }
  return best;
}

// Makes `move` of `v` out of p0 as try_move priced it: a p0 left without
// op nodes leaves the list, ids follow list positions, parents and children
// are rebuilt and the devices mapped afresh.
void Partitioner::apply_move(int v, Partition* p0, const Move& move) {
  swap_nodes(v, move.n1, p0, move.p1);
  if (!holds_ops(g_, *p0)) remove_from(owner_.list, p0);
  reorganize_partitions(g_, owner_.list);
  reset_partition_device(owner_.list);
  if (!map_devices()) {
    refuse_graph("kl_based: no device mapping for the swap of node '" +
                 g_.name(v) + "' (internal error: its try found one)");
  }
}

// ------------------------------------------------------------ aot_based

void Partitioner::aot_based_partition() {
  std::map<int64_t, Partition*> by_id;
  for (const auto& [name, id] : c_.node_to_partition_mapping) {
    auto node = g_.by_name.find(name);
    if (node == g_.by_name.end() || !g_.is_call(node->second)) {
      bad_option("option 'node_to_partition_mapping' names '" + name +
                 "', which is no call node of the graph");
    }
    Partition*& p = by_id[id];
    if (p == nullptr) {
      auto devices = c_.partition_to_logical_device_mapping.find(id);
      if (devices == c_.partition_to_logical_device_mapping.end()) {
        bad_option(
            "option 'partition_to_logical_device_mapping' gives no "
            "devices for partition " +
            std::to_string(id) + " (torch raises KeyError)");
      }
      p = owner_.make(id);
      owner_.list.push_back(p);
      *p->logical_device_ids = devices->second;
    }
    add_node(g_, *p, node->second);
    node_to_partition_[node->second] = id;
  }
}

}  // namespace fx_optimization
