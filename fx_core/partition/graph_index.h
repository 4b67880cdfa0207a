// fx::GraphIndex: a graph's nodes numbered in order, with their inputs
// (all_input_nodes) and users as index lists, for the partitioner's and
// fusion's searches. A snapshot: it does not follow later edits.
#ifndef FX_CORE_PARTITION_GRAPH_INDEX_H_
#define FX_CORE_PARTITION_GRAPH_INDEX_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "fx_core/ir/graph.h"

namespace fx {

class GraphIndex {
 public:
  explicit GraphIndex(const Graph& graph);

  int size() const { return static_cast<int>(nodes_.size()); }
  Node* node(int i) const { return nodes_[i]; }
  // The node's position, or -1 for a node not in the graph.
  int index(const Node* n) const;
  // Distinct input nodes (args then kwargs) and users, in torch.fx's order.
  absl::Span<const int> inputs(int i) const { return span(inputs_, i); }
  absl::Span<const int> users(int i) const { return span(users_, i); }

 private:
  struct Lists {
    std::vector<int> offsets{0};
    std::vector<int> items;
  };
  static absl::Span<const int> span(const Lists& l, int i) {
    return absl::MakeConstSpan(l.items.data() + l.offsets[i],
                               l.offsets[i + 1] - l.offsets[i]);
  }

  std::vector<Node*> nodes_;
  absl::flat_hash_map<const Node*, int> index_;
  Lists inputs_;
  Lists users_;
};

}  // namespace fx

#endif  // FX_CORE_PARTITION_GRAPH_INDEX_H_
