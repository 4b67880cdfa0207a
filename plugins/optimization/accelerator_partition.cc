// accelerator_partition: torch 1.13's torch.fx.experimental.
// accelerator_partitioner.Partitioner.partition_graph(gm, gm, config) with
// partitioner_utils' memory and latency model, as a pass: the graph becomes
// torch's module_with_submodules and each submodule call carries torch's
// partition and DAG information in meta['partition'].
//
// What torch does, and so this pass:
//  - every node before the output gets size_bytes (get_size_of_all_nodes:
//    meta['size_bytes'] = (output, total); run shape_prop first);
//  - aot_based rebuilds the partitions given; otherwise a graph whose total
//    size fits the largest device is one partition on it; a graph larger
//    than all devices together is refused; else by `mode`: size_based
//    (greedy, a device per partition, single-node partitions once devices
//    run out, then a device for each), sparse_nn (embedding and other
//    regions apart, combined by size and BFS level), cost_aware (single-node
//    partitions combined pairwise while the critical path's latency does
//    not grow), kl_based (size_based, then Kernighan-Lin swaps);
//  - saturate_host replicates the partitions of each used device on an idle
//    device with room for them;
//  - torch's split_module by partition id: submodules submod_ID called in
//    its (stack-based) topological order, get_attrs and placeholders passed
//    in, several results unpacked by getitem; the main graph's nodes are
//    named as in torch's new graph;
//  - each submod call gets meta['partition']: partition_id, nodes (names),
//    parents, children, bfs_level, used_mem_bytes, logical_device_ids, and
//    the DAG node's input_nodes, output_nodes and size_bytes; with
//    node_to_latency_mapping also the partition's latency (mem, computer,
//    overall) and on the output node meta['critical_path_latency_sec'].
//
// torch iterates Python sets of nodes; here a partition's nodes are in graph
// order, which decides only ties (kl_based's swap among equal costs).
// Departures, each refusing what torch would crash on or loop forever on:
// a partition with no result (IndexError), sparse_nn without embedding or
// without other nodes (IndexError), a partition cycle in BFS levelling
// (torch loops), a transfer rate of 0 where a cost divides by it
// (ZeroDivisionError), a call_module target spelt with dots inside a
// submodule stays dotted (torch flattens layer1.0.conv1 to layer1_0_conv1;
// the C ABI can share an attribute only at its own path).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/plugin_util.h"
#include "plugins/optimization/passes.h"
#include "plugins/optimization/retrace.h"

namespace fx_optimization {
namespace {

using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

constexpr const char* kPass = "accelerator_partition";
constexpr double kInf = std::numeric_limits<double>::infinity();

[[noreturn]] void refuse(FxStatusCode code, const std::string& what) {
  throw fxp::Error(code, std::string(kPass) + ": " + what);
}
[[noreturn]] void bad_option(const std::string& what) {
  refuse(FX_INVALID_ARGUMENT, what);
}
[[noreturn]] void refuse_graph(const std::string& what) {
  refuse(FX_FAILED_PRECONDITION, what);
}

// ------------------------------------------------------------- options

struct Device {
  std::string name;
  int64_t available_mem_bytes;
  int64_t logical_id;
};

struct NodeLatency {
  double mem_latency_sec;
  double computer_latency_sec;
};

enum class Mode { kSizeBased, kSparseNn, kCostAware, kKlBased, kAotBased };

struct Config {
  std::vector<Device> devices;
  Mode mode = Mode::kSizeBased;
  double transfer_rate_bytes_per_sec = 0;
  std::map<std::string, NodeLatency> node_to_latency_mapping;
  std::vector<std::pair<std::string, int64_t>> node_to_partition_mapping;
  std::map<int64_t, std::vector<int64_t>> partition_to_logical_device_mapping;
  bool saturate_host = false;
};

std::vector<std::string> split_text(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t end = text.find(sep, start);
    out.push_back(text.substr(start, end - start));
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

int64_t parse_int(const std::string& text, const std::string& where) {
  try {
    size_t used = 0;
    int64_t v = std::stoll(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  bad_option(where + ": '" + text + "' is not an integer");
}

double parse_float(const std::string& text, const std::string& where) {
  try {
    size_t used = 0;
    double v = std::stod(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  bad_option(where + ": '" + text + "' is not a number");
}

// `item` split at ':' into exactly `n` fields.
std::vector<std::string> fields(const std::string& option,
                                const std::string& item, size_t n,
                                const char* form) {
  std::vector<std::string> f = split_text(item, ':');
  if (f.size() != n || f[0].empty()) {
    bad_option("option '" + option + "' item '" + item + "' is not " + form);
  }
  return f;
}

std::vector<Device> parse_devices(const fxp::Options& options) {
  std::vector<Device> devices;
  std::set<std::string> names;
  for (const std::string& item : options.get_list("devices")) {
    auto f = fields("devices", item, 3, "NAME:AVAILABLE_MEM_BYTES:LOGICAL_ID");
    const std::string where = "option 'devices' item '" + item + "'";
    devices.push_back({f[0], parse_int(f[1], where), parse_int(f[2], where)});
    if (!names.insert(f[0]).second) {
      bad_option("option 'devices' names device '" + f[0] + "' twice");
    }
  }
  if (devices.empty()) {
    bad_option(
        "No devices (option 'devices' lists none; each item is "
        "NAME:AVAILABLE_MEM_BYTES:LOGICAL_ID)");
  }
  return devices;
}

Mode parse_mode(const std::string& mode) {
  static const std::pair<const char*, Mode> kModes[] = {
      {"size_based", Mode::kSizeBased},
      {"sparse_nn", Mode::kSparseNn},
      {"cost_aware", Mode::kCostAware},
      {"kl_based", Mode::kKlBased},
      {"aot_based", Mode::kAotBased}};
  for (const auto& [name, m] : kModes) {
    if (mode == name) return m;
  }
  bad_option("option 'mode' is '" + mode +
             "', not one of size_based, sparse_nn, cost_aware, kl_based, "
             "aot_based");
}

void parse_latencies(const fxp::Options& options, Config& c) {
  for (const std::string& item : options.get_list("node_to_latency_mapping")) {
    auto f = fields("node_to_latency_mapping", item, 3,
                    "NODE:MEM_LATENCY_SEC:COMPUTER_LATENCY_SEC");
    const std::string where =
        "option 'node_to_latency_mapping' item '" + item + "'";
    NodeLatency l{parse_float(f[1], where), parse_float(f[2], where)};
    if (!c.node_to_latency_mapping.emplace(f[0], l).second) {
      bad_option("option 'node_to_latency_mapping' names '" + f[0] + "' twice");
    }
  }
}

void parse_aot(const fxp::Options& options, Config& c) {
  std::set<std::string> seen;
  for (const std::string& item :
       options.get_list("node_to_partition_mapping")) {
    auto f = fields("node_to_partition_mapping", item, 2, "NODE:PARTITION_ID");
    c.node_to_partition_mapping.emplace_back(
        f[0], parse_int(f[1], "option 'node_to_partition_mapping'"));
    if (!seen.insert(f[0]).second) {
      bad_option("option 'node_to_partition_mapping' names '" + f[0] +
                 "' twice");
    }
  }
  for (const std::string& item :
       options.get_list("partition_to_logical_device_mapping")) {
    auto f = fields("partition_to_logical_device_mapping", item, 2,
                    "PARTITION_ID:LOGICAL_ID+LOGICAL_ID...");
    const std::string where =
        "option 'partition_to_logical_device_mapping' item '" + item + "'";
    std::vector<int64_t> ids;
    if (!f[1].empty()) {
      for (const std::string& id : split_text(f[1], '+')) {
        ids.push_back(parse_int(id, where));
      }
    }
    if (!c.partition_to_logical_device_mapping
             .emplace(parse_int(f[0], where), ids)
             .second) {
      bad_option(where + " gives partition " + f[0] + " twice");
    }
  }
}

Config parse_config(const fxp::Options& options) {
  Config c;
  c.devices = parse_devices(options);
  c.mode = parse_mode(options.get_string("mode"));
  c.transfer_rate_bytes_per_sec =
      options.get_float("transfer_rate_bytes_per_sec");
  parse_latencies(options, c);
  parse_aot(options, c);
  c.saturate_host = options.get_bool("saturate_host");
  if (c.mode != Mode::kAotBased &&
      (!c.node_to_partition_mapping.empty() ||
       !c.partition_to_logical_device_mapping.empty())) {
    bad_option(
        "options 'node_to_partition_mapping' and "
        "'partition_to_logical_device_mapping' are for mode "
        "aot_based");
  }
  return c;
}

// --------------------------------------------------------- the graph

// The nodes before the output, by index in graph order, with what the
// partitioner reads of them.
struct GraphInfo {
  std::vector<Node> nodes;
  std::vector<FxOpcode> op;
  std::vector<int64_t> output_size, total_size;
  std::vector<std::vector<int>> inputs;  // distinct, args then kwargs
  std::vector<std::vector<int>> users;   // without the output node
  std::unordered_map<FxNode*, int> index;
  std::map<std::string, int> by_name;

  bool is_call(int v) const {
    return op[v] == FX_OP_CALL_FUNCTION || op[v] == FX_OP_CALL_METHOD ||
           op[v] == FX_OP_CALL_MODULE;
  }
  bool is_input(int v) const {
    return op[v] == FX_OP_PLACEHOLDER || op[v] == FX_OP_GET_ATTR;
  }
  std::string name(int v) const { return std::string(nodes[v].name()); }
};

GraphInfo read_graph(const Graph& g) {
  GraphInfo info;
  for (Node n : g) {
    if (n.op() == FX_OP_OUTPUT) break;
    info.index[n.get()] = static_cast<int>(info.nodes.size());
    info.by_name[std::string(n.name())] = static_cast<int>(info.nodes.size());
    info.nodes.push_back(n);
    info.op.push_back(n.op());
    ArgView size = n.meta("size_bytes");
    info.output_size.push_back(size[0].as_int());
    info.total_size.push_back(size[1].as_int());
  }
  const size_t count = info.nodes.size();
  info.inputs.resize(count);
  info.users.resize(count);
  for (size_t v = 0; v < count; ++v) {
    for (Node x : info.nodes[v].all_input_nodes()) {
      auto it = info.index.find(x.get());
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

// partitioner_utils.Partition. logical_device_ids is shared where torch
// shares one list among partitions (sparse_nn's non-embedding partitions).
struct Partition {
  int64_t partition_id = 0;
  std::set<int> nodes;  // graph order
  std::set<Partition*> parents, children;
  int64_t bfs_level = -1;
  int64_t used_mem_bytes = 0;
  std::shared_ptr<std::vector<int64_t>> logical_device_ids =
      std::make_shared<std::vector<int64_t>>();
};

using PartitionList = std::vector<Partition*>;

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
  std::vector<int> added;
  for (int u : g.inputs[v]) {
    if (g.is_input(u) && p.nodes.insert(u).second) added.push_back(u);
  }
  if (p.nodes.insert(v).second) added.push_back(v);
  const std::set<int> fresh(added.begin(), added.end());
  for (int y : added) {
    p.used_mem_bytes += extra_size_of(g, y, p.nodes);
    for (int w : g.users[y]) {
      if (p.nodes.count(w) && !fresh.count(w)) {
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
  std::unordered_map<int, std::vector<Partition*>> holders;
  for (Partition* p : ps) {
    p->parents.clear();
    p->children.clear();
    for (int v : p->nodes) holders[v].push_back(p);
  }
  for (Partition* p : ps) {
    for (int v : p->nodes) {
      for (int u : g.users[v]) {
        auto it = holders.find(u);
        if (it == holders.end()) continue;
        for (Partition* q : it->second) {
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

// Owns every partition made; `list` is torch's self.partitions.
struct Partitions {
  std::vector<std::unique_ptr<Partition>> store;
  PartitionList list;

  Partition* make(int64_t id) {
    store.push_back(std::make_unique<Partition>());
    store.back()->partition_id = id;
    return store.back().get();
  }
  Partition* create_partition() {
    Partition* p = make(static_cast<int64_t>(list.size()));
    list.push_back(p);
    return p;
  }
};

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

struct DeviceStats {
  std::vector<PartitionList> device_to_partitions;
  std::vector<int64_t> device_to_left_mem_bytes;
  PartitionList no_device_partitions;
};

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

// ----------------------------------------------------------- latency

struct PartitionLatency {
  double mem_latency_sec = 0;
  double computer_latency_sec = 0;
  double overall_latency_sec = 0;
};

using Latencies = std::vector<std::optional<NodeLatency>>;

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

// ---------------------------------------------------------- partitioner

class Partitioner {
 public:
  Partitioner(const Graph& graph, const GraphInfo& g, const Config& c,
              Latencies latencies)
      : graph_(graph), g_(g), c_(c), latencies_(std::move(latencies)) {}

  void partition_graph();
  const PartitionList& partitions() const { return owner_.list; }
  // node_to_partition: each node's partition id.
  const std::map<int, int64_t>& node_to_partition() const {
    return node_to_partition_;
  }

 private:
  void find_single_partition(int64_t total_size, int64_t logical_id);
  void size_based_partition();
  void sparse_nn_partition(int64_t available_mem_bytes);
  void cost_aware_partition();
  void kl_based_partition();
  void aot_based_partition();
  void saturate_host();

  size_t find_device_based_on_size(int v, std::vector<size_t>& occupied);
  void create_single_node_partition(int v) {
    add_node(g_, *owner_.create_partition(), v);
  }
  void map_nodes_to_partitions() {
    node_to_partition_.clear();
    for (Partition* p : owner_.list) {
      for (int v : p->nodes) node_to_partition_[v] = p->partition_id;
    }
  }
  bool map_devices() {
    return get_device_to_partitions_mapping(g_, owner_.list, c_.devices);
  }
  double cost(const PartitionList& ps) const {
    return cost_of(g_, latencies_, ps, c_.transfer_rate_bytes_per_sec);
  }

  // sparse_nn's helpers.
  bool is_embedding_node(int v);
  void combine_partitions_based_on_size(PartitionList& ps, int64_t available);
  void place_sparse_nn_partitions(const PartitionList& embedding,
                                  const PartitionList& others,
                                  int64_t available);
  // cost_aware's helpers.
  double try_combining_partitions(size_t i, size_t j, PartitionList ps);
  bool search_combination();
  // kl_based's helpers.
  void swap_nodes(int n0, int n1, Partition* p0, Partition* p1);
  double try_swap_nodes(int n0, int n1, Partition* p0, Partition* p1);
  std::pair<double, std::pair<int, int>> swap_node_to_partition(int v,
                                                                Partition* p0,
                                                                Partition* p1);

  const Graph& graph_;
  const GraphInfo& g_;
  const Config& c_;
  const Latencies latencies_;
  Partitions owner_;
  std::map<int, int64_t> node_to_partition_;
  std::map<std::string, bool> embedding_prefix_;
};

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
// them).
double Partitioner::try_combining_partitions(size_t i, size_t j,
                                             PartitionList ps) {
  Partition* p0 = ps[i];
  Partition* p1 = ps[j];
  if (std::abs(p0->bfs_level - p1->bfs_level) > 1 && !p1->parents.count(p0) &&
      !p1->children.count(p0)) {
    return kInf;
  }
  combine_two_partitions(owner_, g_, p0, p1, ps);
  if (check_dependency(ps.back())) return kInf;
  reset_partition_device(ps);
  if (!get_device_to_partitions_mapping(g_, ps, c_.devices)) return kInf;
  return cost(ps);
}

bool Partitioner::search_combination() {
  double best = cost(owner_.list);
  if (owner_.list.size() == 1) return false;
  std::vector<size_t> pair;
  for (size_t i = 0; i + 1 < owner_.list.size(); ++i) {
    for (size_t j = i + 1; j < owner_.list.size(); ++j) {
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

void Partitioner::kl_based_partition() {
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

// ------------------------------------------------------- split_module

// One partition of torch's split_module, by name (its id as text).
struct SplitPartition {
  std::string name;
  std::vector<int> nodes;
  std::vector<int> inputs, outputs;  // insertion-ordered sets
  std::set<std::string> dependent_on;
  std::vector<std::string> dependents;
};

void add_once(std::vector<int>& list, int v) {
  if (std::find(list.begin(), list.end(), v) == list.end()) list.push_back(v);
}

// The node references of `a`, in map_arg's order, repeats kept.
void flatten(ArgView a, std::vector<Node>& out) {
  if (a.kind() == FX_ARG_NODE) {
    out.push_back(a.node());
    return;
  }
  for (size_t i = 0; i < a.size(); ++i) flatten(a[i], out);
}

class SplitPlan {
 public:
  SplitPlan(const GraphInfo& g, const std::map<int, int64_t>& part) : g_(g) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const int v = static_cast<int>(i);
      if (!g.is_call(v)) continue;
      auto it = part.find(v);
      if (it == part.end()) {
        refuse_graph("node '" + g.name(v) +
                     "' is in no partition (option "
                     "'node_to_partition_mapping' misses it; torch raises "
                     "KeyError)");
      }
      place(v, std::to_string(it->second));
    }
  }

  // The output node's uses; then torch's topological order.
  std::vector<SplitPartition*> order(const Node& output) {
    std::vector<Node> used;
    if (output.num_args() > 0) flatten(output.arg(0), used);
    for (const Node& n : used) record(g_.index.at(n.get()), nullptr);
    return sorted();
  }

  SplitPartition* of(int v) const {
    auto it = part_of_.find(v);
    return it == part_of_.end() ? nullptr : it->second;
  }

 private:
  void place(int v, const std::string& name) {
    auto [it, fresh] = index_.emplace(name, partitions_.size());
    if (fresh) {
      partitions_.push_back(std::make_unique<SplitPartition>());
      partitions_.back()->name = name;
    }
    SplitPartition* p = partitions_[it->second].get();
    p->nodes.push_back(v);
    part_of_[v] = p;
    const Node& n = g_.nodes[v];
    std::vector<Node> used;
    for (size_t i = 0; i < n.num_args(); ++i) flatten(n.arg(i), used);
    for (size_t i = 0; i < n.num_kwargs(); ++i) flatten(n.kwarg_value(i), used);
    for (const Node& x : used) record(g_.index.at(x.get()), p);
  }

  // record_cross_partition_use; `use` null for the output.
  void record(int def, SplitPartition* use) {
    SplitPartition* from = of(def);
    if (from == use) return;
    if (from != nullptr) {
      add_once(from->outputs, def);
      if (use != nullptr &&
          std::find(from->dependents.begin(), from->dependents.end(),
                    use->name) == from->dependents.end()) {
        from->dependents.push_back(use->name);
      }
    }
    if (use != nullptr) {
      add_once(use->inputs, def);
      if (from != nullptr) use->dependent_on.insert(from->name);
    }
  }

  std::vector<SplitPartition*> sorted() {
    std::vector<std::string> roots;
    for (const auto& p : partitions_) {
      if (p->dependent_on.empty()) roots.push_back(p->name);
    }
    std::vector<SplitPartition*> out;
    while (!roots.empty()) {
      SplitPartition* root = partitions_[index_.at(roots.back())].get();
      roots.pop_back();
      out.push_back(root);
      for (const std::string& d : root->dependents) {
        SplitPartition* dep = partitions_[index_.at(d)].get();
        dep->dependent_on.erase(root->name);
        if (dep->dependent_on.empty()) roots.push_back(d);
      }
    }
    if (out.size() != partitions_.size()) {
      refuse_graph("cycle exists between partitions!");
    }
    for (SplitPartition* p : out) {
      if (p->outputs.empty()) {
        refuse_graph("partition " + p->name + " (node '" +
                     g_.name(p->nodes[0]) +
                     "') has no result used outside it; torch's split_module "
                     "fails on it (IndexError)");
      }
    }
    return out;
  }

  const GraphInfo& g_;
  std::vector<std::unique_ptr<SplitPartition>> partitions_;
  std::map<std::string, size_t> index_;
  std::unordered_map<int, SplitPartition*> part_of_;
};

// Copies every meta item of `from` to `to` (torch's node.meta.copy()).
void copy_meta(const Node& from, Node& to) {
  const FxApi* api = fxp::api();
  const size_t count = api->NodeNumMeta(from.get());
  for (size_t i = 0; i < count; ++i) {
    const char* key = api->NodeMetaKey(from.get(), i);
    to.set_meta(key, Arg(from.meta(key)));
  }
}

// Fills submodule `p`'s graph as torch's split_module does.
void build_submodule(Graph& g, const GraphInfo& info, const SplitPartition& p,
                     Graph sub) {
  std::unordered_map<FxNode*, Node> env;
  for (int v : p.inputs) {
    const std::string name = info.name(v);
    Node ph = sub.create_node(FX_OP_PLACEHOLDER, name.c_str());
    copy_meta(info.nodes[v], ph);
    env[info.nodes[v].get()] = ph;
  }
  std::set<std::string> shared;
  const std::function<Node(Node)> value = [&](Node x) {
    return env.at(x.get());
  };
  for (int v : p.nodes) {
    const Node& n = info.nodes[v];
    const std::string target(n.target());
    if (n.op() == FX_OP_CALL_MODULE && shared.insert(target).second) {
      fxp::share_attr(g, sub, target.c_str());
    }
    std::vector<Arg> args;
    for (size_t i = 0; i < n.num_args(); ++i) {
      args.push_back(fx_plugins::map_arg(n.arg(i), value));
    }
    fxp::Kwargs kwargs;
    for (size_t i = 0; i < n.num_kwargs(); ++i) {
      kwargs.emplace_back(n.kwarg_key(i),
                          fx_plugins::map_arg(n.kwarg_value(i), value));
    }
    Node copy = sub.create_node(n.op(), target.c_str(), args, kwargs);
    copy_meta(n, copy);
    env[n.get()] = copy;
  }
  std::vector<Arg> outs;
  for (int v : p.outputs) outs.emplace_back(env.at(info.nodes[v].get()));
  sub.create_node(FX_OP_OUTPUT, "output",
                  {outs.size() == 1 ? outs[0] : Arg::tuple(outs)});
}

// The main graph's calls; each original node's value there.
struct MainGraph {
  std::vector<Node> made;
  std::vector<Node> calls;  // one per partition, in order
  std::unordered_map<FxNode*, Node> value_of;
  Node value(const Node& x) const {
    auto it = value_of.find(x.get());
    return it == value_of.end() ? x : it->second;
  }
};

MainGraph build_main(Graph& g, const GraphInfo& info,
                     const std::vector<SplitPartition*>& order) {
  MainGraph main;
  fxp::InsertGuard at = g.inserting_before(g.output_node());
  for (const SplitPartition* p : order) {
    std::vector<Arg> args;
    for (int v : p->inputs) args.emplace_back(main.value(info.nodes[v]));
    const std::string name = "submod_" + p->name;
    Node call = g.call_module(name.c_str(), args);
    main.made.push_back(call);
    main.calls.push_back(call);
    if (p->outputs.size() == 1) {
      main.value_of[info.nodes[p->outputs[0]].get()] = call;
      continue;
    }
    for (size_t i = 0; i < p->outputs.size(); ++i) {
      main.value_of[info.nodes[p->outputs[i]].get()] =
          main.made.emplace_back(g.call_function(
              "operator.getitem", {Arg(call), Arg(static_cast<int64_t>(i))}));
    }
  }
  return main;
}

// The main graph named as torch's new graph names it.
void name_main(Graph& g, const std::vector<Node>& made) {
  std::vector<FreshNode> fresh;
  for (Node n : g) {
    if (n.op() == FX_OP_PLACEHOLDER || n.op() == FX_OP_GET_ATTR) {
      fresh.push_back({n.op(), std::string(n.target()), ""});
    }
  }
  for (const Node& n : made) fresh.push_back({n.op(), n.target_cstr(), ""});
  const std::vector<std::string> names = fresh_graph_names(fresh);
  Renames renames;
  size_t i = 0;
  for (Node n : g) {
    if (n.name() != names[i]) renames.emplace_back(n, names[i]);
    ++i;
  }
  apply_retrace_names(g, renames);
}

// torch's split_module(gm, gm, node -> partition id), in place; returns
// the submodule calls in order with their partitions' names.
std::vector<std::pair<Node, std::string>> split_by_partition(
    Graph& g, const GraphInfo& info, const std::map<int, int64_t>& part) {
  SplitPlan plan(info, part);
  const std::vector<SplitPartition*> order = plan.order(g.output_node());
  for (const SplitPartition* p : order) {
    const std::string name = "submod_" + p->name;
    if (g.has_attr(name.c_str())) {
      refuse_graph("the module already has an attribute '" + name + "'");
    }
  }
  for (const SplitPartition* p : order) {
    const std::string name = "submod_" + p->name;
    build_submodule(g, info, *p, fxp::add_subgraph_module(g, name.c_str()));
  }
  MainGraph main = build_main(g, info, order);
  Node output = g.output_node();
  output.set_type(nullptr);
  if (output.num_args() > 0) {
    output.update_arg(0, fx_plugins::map_arg(output.arg(0), [&](Node x) {
                        return main.value(x);
                      }));
  }
  for (size_t i = info.nodes.size(); i-- > 0;) {
    if (info.is_call(static_cast<int>(i))) g.erase_node(info.nodes[i]);
  }
  for (Node n : g) {
    if (n.op() == FX_OP_GET_ATTR) n.set_type(nullptr);
  }
  name_main(g, main.made);
  std::vector<std::pair<Node, std::string>> calls;
  for (size_t k = 0; k < order.size(); ++k) {
    calls.emplace_back(main.calls[k], order[k]->name);
  }
  return calls;
}

// ------------------------------------------------------------- results

Arg int_list(const std::vector<int64_t>& values) {
  std::vector<Arg> items;
  for (int64_t v : values) items.emplace_back(v);
  return Arg::list(items);
}

Arg ids_of(const std::set<Partition*>& ps) {
  std::vector<int64_t> ids;
  for (Partition* p : ps) ids.push_back(p->partition_id);
  std::sort(ids.begin(), ids.end());
  return int_list(ids);
}

Arg names_of(const std::vector<Node>& nodes) {
  std::vector<Arg> items;
  for (const Node& n : nodes) items.emplace_back(std::string(n.name()));
  return Arg::list(items);
}

// dump_dag's DAG node and the partition it names, as one meta dict.
Arg partition_meta(const GraphInfo& info, const Partition& p, Node call,
                   const std::optional<PartitionLatency>& latency) {
  std::vector<Arg> nodes;
  for (int v : p.nodes) nodes.emplace_back(info.name(v));
  std::vector<Node> users = call.users();
  std::vector<Node> outputs =
      users.size() > 1 ? users : std::vector<Node>{call};
  std::vector<std::pair<std::string, Arg>> items = {
      {"partition_id", Arg(p.partition_id)},
      {"nodes", Arg::list(nodes)},
      {"parents", ids_of(p.parents)},
      {"children", ids_of(p.children)},
      {"bfs_level", Arg(p.bfs_level)},
      {"used_mem_bytes", Arg(p.used_mem_bytes)},
      {"logical_device_ids", int_list(*p.logical_device_ids)},
      {"input_nodes", names_of(call.all_input_nodes())},
      {"output_nodes", names_of(outputs)},
      {"size_bytes", Arg(p.used_mem_bytes)}};
  if (latency) {
    items.emplace_back(
        "latency",
        Arg::dict(
            {{"mem_latency_sec", Arg(latency->mem_latency_sec)},
             {"computer_latency_sec", Arg(latency->computer_latency_sec)},
             {"overall_latency_sec", Arg(latency->overall_latency_sec)}}));
  }
  return Arg::dict(items);
}

// Node latencies by index; only what the mapping names, which must be
// nodes of the graph.
Latencies read_latencies(const GraphInfo& info, const Config& c) {
  Latencies l(info.nodes.size());
  for (const auto& [name, latency] : c.node_to_latency_mapping) {
    auto it = info.by_name.find(name);
    if (it == info.by_name.end()) {
      bad_option("option 'node_to_latency_mapping' names '" + name +
                 "', which is no node of the graph");
    }
    l[it->second] = latency;
  }
  return l;
}

// The sizes torch's partitioner writes (get_size_of_all_nodes), refused
// under this pass's name.
void write_sizes(Graph& g, const fxp::Options& options) {
  try {
    get_size_of_all_nodes(g, options);
  } catch (const fxp::Error& e) {
    const std::string what = e.what();
    const std::string prefix = "get_size_of_all_nodes: ";
    refuse(e.code(),
           what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what);
  }
}

void annotate(const GraphInfo& info, const Config& c, const Latencies& l,
              const Partitioner& partitioner,
              const std::vector<std::pair<Node, std::string>>& calls,
              Graph& g) {
  std::map<int64_t, Partition*> by_id;
  for (Partition* p : partitioner.partitions()) {
    by_id.emplace(p->partition_id, p);
  }
  const bool timed = !c.node_to_latency_mapping.empty();
  std::map<Partition*, PartitionLatency> latency;
  if (timed) {
    latency = partition_to_latency_mapping(info, l, partitioner.partitions());
  }
  for (const auto& [call, name] : calls) {
    Partition* p = by_id.at(std::stoll(name));
    std::optional<PartitionLatency> pl;
    if (timed) pl = latency.at(p);
    Node(call).set_meta("partition", partition_meta(info, *p, call, pl));
  }
  if (timed) {
    g.output_node().set_meta("critical_path_latency_sec",
                             Arg(latency_of_partitioned_graph(
                                 info, partitioner.partitions(), latency,
                                 c.transfer_rate_bytes_per_sec)));
  }
}

}  // namespace

bool accelerator_partition(Graph& g, const fxp::Options& options) {
  require_renaming(kPass);
  const Config config = parse_config(options);
  write_sizes(g, options);
  const GraphInfo info = read_graph(g);
  Latencies latencies = read_latencies(info, config);
  Partitioner partitioner(g, info, config, latencies);
  partitioner.partition_graph();
  const auto calls =
      split_by_partition(g, info, partitioner.node_to_partition());
  annotate(info, config, latencies, partitioner, calls, g);
  return true;
}

}  // namespace fx_optimization
