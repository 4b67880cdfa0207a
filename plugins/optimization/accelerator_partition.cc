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
//    not grow), kl_based (size_based, then Kernighan-Lin swaps; fixed by
//    default, see below);
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
// Where torch 1.13 is wrong the default is the fix and a bool option gives
// torch's behaviour: kl_based applies, for each op node in graph order, its
// best improving move and splits by the partitions as they end up
// (kl_as_torch: torch's loop, whose split stays size_based's); each DAG
// node's logical_device_ids and size_bytes are its own partition's
// (dag_by_list_position: the partition's at the list position named by the
// id, as dump_dag reads them, refused where torch raises IndexError).
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
#include "plugins/optimization/accelerator_partition.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/plugin_util.h"
#include "plugins/optimization/passes.h"
#include "plugins/optimization/retrace.h"

namespace fx_optimization {

using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

[[noreturn]] void refuse(FxStatusCode code, const std::string& what) {
  fx_plugins::refuse_in(kPass, code, what);
}
[[noreturn]] void bad_option(const std::string& what) {
  refuse(FX_INVALID_ARGUMENT, what);
}
[[noreturn]] void refuse_graph(const std::string& what) {
  refuse(FX_FAILED_PRECONDITION, what);
}

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

namespace {

// ------------------------------------------------------------- options

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
  c.kl_as_torch = options.get_bool("kl_as_torch");
  c.dag_by_list_position = options.get_bool("dag_by_list_position");
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

// dump_dag's DAG node and the partition `p` it names, as one meta dict;
// the DAG node's logical_device_ids and size_bytes are `dag`'s.
Arg partition_meta(const GraphInfo& info, const Partition& p,
                   const Partition& dag, Node call,
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
      {"logical_device_ids", int_list(*dag.logical_device_ids)},
      {"input_nodes", names_of(call.all_input_nodes())},
      {"output_nodes", names_of(outputs)},
      {"size_bytes", Arg(dag.used_mem_bytes)}};
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

// The partition at the list position torch 1.13's dump_dag reads for
// submodule call `call`: int(call.name.rsplit("_", 1)[-1]); refused where
// torch raises (IndexError past the list's end, ValueError on no number).
Partition* listed_partition(const PartitionList& ps, const Node& call) {
  const std::string name(call.name());
  const std::string digits = name.substr(name.rfind('_') + 1);
  const std::string where = "dump_dag: submodule call '" + name + "' reads ";
  if (digits.empty() || digits.size() > 18 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    refuse_graph(where +
                 "no partition position (torch raises ValueError; "
                 "option dag_by_list_position)");
  }
  const size_t position = std::stoull(digits);
  if (position >= ps.size()) {
    refuse_graph(where + "partitions[" + digits + "], but there are " +
                 std::to_string(ps.size()) +
                 " partitions (torch 1.13 raises IndexError; option "
                 "dag_by_list_position)");
  }
  return ps[position];
}

// Each submodule call's partition (by its id) and the one its DAG node's
// devices and size come from: the same, or with dag_by_list_position the
// one listed_partition reads (every call checked before any is annotated).
std::vector<std::pair<Partition*, Partition*>> call_partitions(
    const Config& c, const PartitionList& ps,
    const std::vector<std::pair<Node, std::string>>& calls) {
  std::map<int64_t, Partition*> by_id;
  for (Partition* p : ps) by_id.emplace(p->partition_id, p);
  std::vector<std::pair<Partition*, Partition*>> out;
  for (const auto& [call, name] : calls) {
    Partition* p = by_id.at(std::stoll(name));
    out.emplace_back(p,
                     c.dag_by_list_position ? listed_partition(ps, call) : p);
  }
  return out;
}

void annotate(const GraphInfo& info, const Config& c, const Latencies& l,
              const Partitioner& partitioner,
              const std::vector<std::pair<Node, std::string>>& calls,
              Graph& g) {
  const auto parts = call_partitions(c, partitioner.partitions(), calls);
  const bool timed = !c.node_to_latency_mapping.empty();
  std::map<Partition*, PartitionLatency> latency;
  if (timed) {
    latency = partition_to_latency_mapping(info, l, partitioner.partitions());
  }
  for (size_t k = 0; k < calls.size(); ++k) {
    const auto [p, dag] = parts[k];
    Node call = calls[k].first;
    std::optional<PartitionLatency> pl;
    if (timed) pl = latency.at(p);
    call.set_meta("partition", partition_meta(info, *p, *dag, call, pl));
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
  const GraphInfo info =
      read_graph(g, config.mode == Mode::kAotBased ||
                        !config.node_to_latency_mapping.empty());
  Latencies latencies = read_latencies(info, config);
  Partitioner partitioner(g, info, config, latencies);
  partitioner.partition_graph();
  const auto calls =
      split_by_partition(g, info, partitioner.node_to_partition());
  annotate(info, config, latencies, partitioner, calls, g);
  return true;
}

}  // namespace fx_optimization
