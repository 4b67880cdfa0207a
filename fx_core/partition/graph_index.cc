#include "fx_core/partition/graph_index.h"

namespace fx {

GraphIndex::GraphIndex(const Graph& graph) {
  nodes_.reserve(graph.size());
  index_.reserve(graph.size());
  for (Node* n : graph.nodes()) {
    index_.emplace(n, static_cast<int>(nodes_.size()));
    nodes_.push_back(n);
  }
  inputs_.offsets.reserve(nodes_.size() + 1);
  users_.offsets.reserve(nodes_.size() + 1);
  for (Node* n : nodes_) {
    for (Node* input : n->all_input_nodes()) {
      inputs_.items.push_back(index(input));
    }
    inputs_.offsets.push_back(static_cast<int>(inputs_.items.size()));
    for (Node* user : n->users()) users_.items.push_back(index(user));
    users_.offsets.push_back(static_cast<int>(users_.items.size()));
  }
}

int GraphIndex::index(const Node* n) const {
  auto it = index_.find(n);
  return it == index_.end() ? -1 : it->second;
}

}  // namespace fx
