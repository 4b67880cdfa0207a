// accelerator_partition's internal declarations, shared by its files:
// refusals, options (Config), the graph as the partitioner reads it
// (GraphInfo), the partition model and DAG (accelerator_partition_model.cc),
// partitioner_utils' latency model (accelerator_partition_latency.cc), the
// Partitioner and its modes (accelerator_partition_modes.cc) and torch's
// split_module by partition (accelerator_partition_split.cc). The pass
// entry is accelerator_partition.cc.
#ifndef PLUGINS_OPTIMIZATION_ACCELERATOR_PARTITION_H_
#define PLUGINS_OPTIMIZATION_ACCELERATOR_PARTITION_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"

namespace fx_optimization {

constexpr const char* kPass = "accelerator_partition";

[[noreturn]] void refuse(FxStatusCode code, const std::string& what);
[[noreturn]] void bad_option(const std::string& what);
[[noreturn]] void refuse_graph(const std::string& what);

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
  // kl_based as torch 1.13 does it (its bugs kept); else the fixed search.
  bool kl_as_torch = false;
  // The DAG's logical_device_ids and size_bytes from the partition at the
  // list position given by the call's name, as torch 1.13's dump_dag.
  bool dag_by_list_position = false;
};

std::vector<std::string> split_text(const std::string& text, char sep);

// --------------------------------------------------------- the graph

// The nodes before the output, by index in graph order, with what the
// partitioner reads of them.
struct GraphInfo {
  std::vector<fxp::Node> nodes;
  std::vector<FxOpcode> op;
  std::vector<int64_t> output_size, total_size;
  std::vector<std::vector<int>> inputs;  // distinct, args then kwargs
  std::vector<std::vector<int>> users;   // without the output node
  std::unordered_map<FxNode*, int> index;
  std::map<std::string, int> by_name;  // only when read_graph is asked

  bool is_call(int v) const {
    return op[v] == FX_OP_CALL_FUNCTION || op[v] == FX_OP_CALL_METHOD ||
           op[v] == FX_OP_CALL_MODULE;
  }
  bool is_input(int v) const {
    return op[v] == FX_OP_PLACEHOLDER || op[v] == FX_OP_GET_ATTR;
  }
  std::string name(int v) const { return std::string(nodes[v].name()); }
};

// `by_name`: also index the nodes by name (the options naming nodes).
GraphInfo read_graph(const fxp::Graph& g, bool by_name);

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
int64_t extra_size_of(const GraphInfo& g, int v, const std::set<int>& nodes);
void recalculate_mem_size(const GraphInfo& g, Partition& p);
// Partition.add_node: the node and its placeholder / get_attr inputs; the
// size is updated by what changed (recalculate_mem_size's value).
void add_node(const GraphInfo& g, Partition& p, int v);
// Partition.remove_node.
void remove_node(const GraphInfo& g, Partition& p, int v);
// set_parents_and_children.
void set_parents_and_children(const GraphInfo& g, const PartitionList& ps);
void reorganize_partitions(const GraphInfo& g, const PartitionList& ps);
void reset_partition_device(const PartitionList& ps);
// get_bfs_level_partition; torch loops forever on a cycle.
void get_bfs_level_partition(const PartitionList& ps);
// check_dependency: whether `p` reaches itself through its children.
bool check_dependency(Partition* p);
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

void remove_from(PartitionList& ps, Partition* p);
// combine_two_partitions: their union appended to `ps`, both removed.
void combine_two_partitions(Partitions& owner, const GraphInfo& g,
                            Partition* p0, Partition* p1, PartitionList& ps);
// ----------------------------------------------------------- devices

// get_logical_id_to_device: the last device with each id.
std::map<int64_t, size_t> logical_id_to_device(
    const std::vector<Device>& devices);
struct DeviceStats {
  std::vector<PartitionList> device_to_partitions;
  std::vector<int64_t> device_to_left_mem_bytes;
  PartitionList no_device_partitions;
};

DeviceStats get_device_partition_stats(const PartitionList& ps,
                                       const std::vector<Device>& devices);
// calculate_extra_mem_bytes_needed_for.
int64_t extra_mem_bytes_needed_for(const GraphInfo& g, const Partition& p,
                                   const PartitionList& on_device);
// get_device_to_partitions_mapping: each partition without a device on the
// device with the least memory left that has more than it needs.
bool get_device_to_partitions_mapping(const GraphInfo& g,
                                      const PartitionList& ps,
                                      const std::vector<Device>& devices);
// ----------------------------------------------------------- latency

struct PartitionLatency {
  double mem_latency_sec = 0;
  double computer_latency_sec = 0;
  double overall_latency_sec = 0;
};

using Latencies = std::vector<std::optional<NodeLatency>>;

const NodeLatency& latency_of(const GraphInfo& g, const Latencies& l, int v);
// get_latency_of_one_partition: the longest path (by max(computer, mem)
// per node) from a top node to a bottom node, summed along the path as
// torch's depth-first search sums it.
PartitionLatency latency_of_partition(const GraphInfo& g, const Latencies& l,
                                      const Partition& p);
// get_comm_latency_between.
double comm_latency_between(const GraphInfo& g, const Partition& parent,
                            const Partition& child, double rate);
// The partitions in an order where parents come first.
PartitionList topological(const PartitionList& ps);
// get_latency_of_partitioned_graph: the longest path of partitions, each
// step adding the partition's overall latency and the transfer to the
// next, summed along the path as torch's search sums it.
double latency_of_partitioned_graph(
    const GraphInfo& g, const PartitionList& ps,
    const std::map<Partition*, PartitionLatency>& latency, double rate);
std::map<Partition*, PartitionLatency> partition_to_latency_mapping(
    const GraphInfo& g, const Latencies& l, const PartitionList& ps);
double cost_of(const GraphInfo& g, const Latencies& l, const PartitionList& ps,
               double rate);
// ---------------------------------------------------------- partitioner

class Partitioner {
 public:
  Partitioner(const fxp::Graph& graph, const GraphInfo& g, const Config& c,
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
  void kl_based_as_torch();
  // The fixed kl_based's helpers (see kl_based_partition).
  struct Move {
    double cost;
    int n1;  // the node of p1 swapped with the moved one; -1: none
    Partition* p1;
  };
  Partition* holder_of(int v) const;
  bool has_result(const Partition& p) const;
  double try_move(int v, int n1, Partition* p0, Partition* p1);
  Move best_move(int v, Partition* p0, double current);
  void apply_move(int v, Partition* p0, const Move& move);

  const fxp::Graph& graph_;
  const GraphInfo& g_;
  const Config& c_;
  const Latencies latencies_;
  Partitions owner_;
  std::map<int, int64_t> node_to_partition_;
  std::map<std::string, bool> embedding_prefix_;
  std::vector<bool> read_by_output_;  // by node index (the fixed kl_based)
};

// ------------------------------------------------------- split_module

// torch's split_module(gm, gm, node -> partition id), in place; returns
// the submodule calls in order with their partitions' names.
std::vector<std::pair<fxp::Node, std::string>> split_by_partition(
    fxp::Graph& g, const GraphInfo& info, const std::map<int, int64_t>& part);

}  // namespace fx_optimization

#endif  // PLUGINS_OPTIMIZATION_ACCELERATOR_PARTITION_H_
