// fx::fuse_by_partitions: torch.fx's fuse_by_partitions
// (torch/fx/passes/utils/fuser_utils.py, torch 1.13) on the graph alone.
//
// Partition k (a list of nodes of `graph`) becomes a child graph called by
// one call_module node whose target is PREFIX + k ("fused_0"):
//  - the child's nodes are copies of the partition's, in topological order
//    (Kahn's, first-in first-out, from the list's order: torch.fx's
//    topo_sort), with their names, types and meta;
//  - a value from outside becomes a placeholder named as the value's node
//    (meta copied), in order of first use; the call passes those values;
//  - the partition's nodes used outside it are its outputs, in that order:
//    one is returned as is and replaces the call's uses, several are returned
//    as a tuple and read back with operator.getitem nodes;
//  - the partition's nodes are erased, and the whole graph is put in
//    topological order as torch.fx's legalize_graph does (first-in first-out
//    from the nodes without inputs, in graph order).
// The child graphs' get_attr and call_module targets name attributes of the
// graph's module; the caller installs each child as a submodule that shares
// them (torch.fx's lift_subgraph_as_module).
//
// Every partition is checked before anything changes: its nodes belong to the
// graph, are neither placeholders nor the output, appear in one partition
// once, some of them are used outside it, and fusing all the partitions
// leaves the graph without a cycle. A failed check throws FxError naming the
// partition and leaves the graph unchanged.
#ifndef FX_CORE_PARTITION_FUSE_PARTITIONS_H_
#define FX_CORE_PARTITION_FUSE_PARTITIONS_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fx_core/ir/graph.h"

namespace fx {

struct FusedSubgraph {
  std::string name;  // the call_module target, "fused_0"
  std::unique_ptr<Graph> graph;
};

std::vector<FusedSubgraph> fuse_by_partitions(
    Graph& graph, const std::vector<std::vector<Node*>>& partitions,
    std::string_view prefix = "fused_");

// torch.fx's legalize_graph: puts the nodes in topological order (Kahn's,
// first-in first-out, starting from the nodes without inputs in graph order).
// Throws FxError, graph unchanged, when the graph has a cycle.
void legalize_graph(Graph& graph);

}  // namespace fx

#endif  // FX_CORE_PARTITION_FUSE_PARTITIONS_H_
