// fx::propose_partitions: torch.fx's CapabilityBasedPartitioner
// (torch/fx/passes/infra/partitioner.py, torch 1.13), near-linear.
//
// Groups the nodes a support rule accepts into partitions, as torch.fx's
// propose_partitions does, with its results:
//  1. Supported nodes are visited in reverse graph order. A node joins the
//     partitions of its users (an unsupported user counts as a partition of
//     its own), except those downstream of another of them (a path in the
//     graph from one to the other); when several remain, they merge into the
//     first (in the node's users order), whose id the result keeps. A node
//     with none starts a new partition.
//  2. A node all of whose users are operator.getitem calls takes its getitems
//     into its partition (or out of every partition when it has none).
//  3. Unless allows_single_node_partition, partitions with at most one
//     compute node (a call_function other than operator.getitem and
//     torch.ops.aten.view; call_module and call_method nodes do not count)
//     are dropped. Partitions of fewer than min_partition_size nodes are
//     dropped too (not in torch.fx; 0 keeps all).
// Partitions come in torch.fx's order (by id: the order they were started
// in), each with its nodes in graph order.
//
// Differences from torch.fx: placeholder and output nodes never join a
// partition (torch.fx puts them in when the rule accepts them, and its fusion
// then breaks the graph); where two users' partitions are each downstream of
// the other, torch.fx's choice follows Python's set order, here the earlier
// user's partition is kept.
//
// The graph must be in topological order (as torch.fx assumes). Cost:
// O(nodes + edges) plus, for a node whose users lie in different partitions,
// a search for paths between them bounded by their positions in the graph;
// torch.fx builds every node's set of ancestors instead (quadratic).
#ifndef FX_CORE_PARTITION_CAPABILITY_PARTITIONER_H_
#define FX_CORE_PARTITION_CAPABILITY_PARTITIONER_H_

#include <cstddef>
#include <vector>

#include "fx_core/ir/graph.h"
#include "fx_core/partition/operator_support.h"

namespace fx {

struct PartitionOptions {
  bool allows_single_node_partition = false;
  size_t min_partition_size = 0;
};

struct Partition {
  size_t id = 0;             // torch.fx's partition id
  std::vector<Node*> nodes;  // in graph order
};

std::vector<Partition> propose_partitions(const Graph& graph,
                                          const OperatorSupport& support,
                                          const PartitionOptions& options = {});

}  // namespace fx

#endif  // FX_CORE_PARTITION_CAPABILITY_PARTITIONER_H_
