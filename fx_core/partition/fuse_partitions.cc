#include "fx_core/partition/fuse_partitions.h"

#include <deque>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "fx_core/partition/graph_index.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

using NodeSet = absl::flat_hash_set<const Node*>;

// Each node's partition (-1 outside), after checking the partitions' nodes.
std::vector<int> partition_of(const GraphIndex& index,
                              const std::vector<std::vector<Node*>>& parts) {
  std::vector<int> part(index.size(), -1);
  for (size_t k = 0; k < parts.size(); ++k) {
    if (parts[k].empty()) throw FxError(cat("partition ", k, " is empty"));
    for (const Node* n : parts[k]) {
      int i = n == nullptr ? -1 : index.index(n);
      if (i < 0) {
        throw FxError(cat("partition ", k, ": a node not in the graph"));
      }
      if (n->op() == Opcode::kPlaceholder || n->op() == Opcode::kOutput) {
        throw FxError(cat("partition ", k, ": node '", n->name(), "' is ",
                          opcode_name(n->op()), ", which cannot be fused"));
      }
      if (part[i] >= 0) {
        throw FxError(cat("partition ", k, ": node '", n->name(),
                          "' is already in partition ", part[i]));
      }
      part[i] = static_cast<int>(k);
    }
  }
  return part;
}

// The partitions contracted to one node each: every other node is a group
// of its own (num_parts + its index).
struct Contraction {
  const GraphIndex& index;
  const std::vector<int>& part;
  int num_parts;
  int group(int n) const { return part[n] >= 0 ? part[n] : num_parts + n; }
  int size() const { return num_parts + index.size(); }
};

// Throws when a partition has no user outside it.
void check_outputs(const Contraction& c) {
  std::vector<char> has_output(c.num_parts, 0);
  for (int n = 0; n < c.index.size(); ++n) {
    if (c.part[n] < 0) continue;
    for (int u : c.index.users(n)) {
      if (c.group(u) != c.group(n)) has_output[c.part[n]] = 1;
    }
  }
  for (int k = 0; k < c.num_parts; ++k) {
    if (!has_output[k]) {
      throw FxError(cat("partition ", k, " has no user outside it"));
    }
  }
}

// The in-degree each group has left after Kahn's algorithm on the
// contracted graph: all zero when it has no cycle.
std::vector<int> contracted_indegrees(const Contraction& c) {
  std::vector<int> indegree(c.size(), 0);
  for (int n = 0; n < c.index.size(); ++n) {
    for (int u : c.index.users(n)) {
      if (c.group(u) != c.group(n)) ++indegree[c.group(u)];
    }
  }
  std::vector<std::vector<int>> members(c.num_parts);
  for (int n = 0; n < c.index.size(); ++n) {
    if (c.part[n] >= 0) members[c.part[n]].push_back(n);
  }
  std::vector<int> ready;
  for (int g = 0; g < c.size(); ++g) {
    bool in_partition = g >= c.num_parts && c.part[g - c.num_parts] >= 0;
    if (indegree[g] == 0 && !in_partition) ready.push_back(g);
  }
  auto release = [&](int n, int g) {
    for (int u : c.index.users(n)) {
      if (c.group(u) != g && --indegree[c.group(u)] == 0) {
        ready.push_back(c.group(u));
      }
    }
  };
  while (!ready.empty()) {
    int g = ready.back();
    ready.pop_back();
    if (g < c.num_parts) {
      for (int n : members[g]) release(n, g);
    } else {
      release(g - c.num_parts, g);
    }
  }
  return indegree;
}

// Throws when a partition has no user outside it, or when contracting every
// partition to one node would make a cycle.
void check_fusable(const GraphIndex& index, const std::vector<int>& part,
                   size_t num_parts) {
  Contraction c{index, part, static_cast<int>(num_parts)};
  check_outputs(c);
  std::vector<int> left = contracted_indegrees(c);
  for (int k = 0; k < c.num_parts; ++k) {
    if (left[k] > 0) {
      throw FxError(cat("partition ", k,
                        " cannot be fused: the graph would have a cycle "
                        "through nodes outside it"));
    }
  }
  for (int g = c.num_parts; g < c.size(); ++g) {
    if (left[g] > 0) {
      throw FxError(
          "the partitions cannot be fused: the graph would have a cycle");
    }
  }
}

// torch.fx's topo_sort: Kahn's algorithm, first-in first-out, from the
// partition's order.
std::vector<Node*> topo_sort(const std::vector<Node*>& nodes) {
  absl::flat_hash_map<const Node*, int> indegree;
  for (Node* n : nodes) indegree[n] = 0;
  std::deque<Node*> ready;
  for (Node* n : nodes) {
    for (Node* input : n->all_input_nodes()) {
      if (indegree.contains(input)) ++indegree[n];
    }
    if (indegree[n] == 0) ready.push_back(n);
  }
  std::vector<Node*> sorted;
  while (!ready.empty()) {
    Node* n = ready.front();
    ready.pop_front();
    sorted.push_back(n);
    for (Node* u : n->users()) {
      auto it = indegree.find(u);
      if (it != indegree.end() && --it->second == 0) ready.push_back(u);
    }
  }
  return sorted;
}

// The child graph of one partition (torch.fx's fuse_as_graphmodule) and the
// parent's values it reads and gives back.
struct Extracted {
  std::unique_ptr<Graph> graph = std::make_unique<Graph>();
  std::vector<Node*> inputs;
  std::vector<Node*> outputs;
};

Extracted extract(const std::vector<Node*>& sorted) {
  Extracted e;
  NodeSet members(sorted.begin(), sorted.end());
  absl::flat_hash_map<const Node*, Node*> copies;
  std::function<Argument(Node*)> remap = [&](Node* x) -> Argument {
    auto it = copies.find(x);
    if (it != copies.end()) return it->second;
    Node* p = e.graph->placeholder(x->name(), x->type());
    if (!x->meta().empty()) p->mutable_meta() = x->meta();
    copies[x] = p;
    e.inputs.push_back(x);
    return p;
  };
  for (Node* n : sorted) copies[n] = e.graph->node_copy(n, remap);
  ArgumentList outs;
  for (Node* n : sorted) {
    for (Node* u : n->users()) {
      if (members.contains(u)) continue;
      e.outputs.push_back(n);
      outs.emplace_back(copies[n]);
      break;
    }
  }
  e.graph->output(outs.size() == 1 ? outs[0] : Argument::tuple(outs));
  e.graph->lint();
  return e;
}

// torch.fx's insert_subgm and erase_nodes.
void replace_in_parent(Graph& g, const std::string& name, const Extracted& e,
                       const std::vector<Node*>& sorted) {
  Node::Args args(e.inputs.begin(), e.inputs.end());
  Node* call = g.call_module(name, std::move(args));
  if (e.outputs.size() == 1) {
    e.outputs[0]->replace_all_uses_with(call);
  } else {
    for (size_t i = 0; i < e.outputs.size(); ++i) {
      Node* item =
          g.call_function("operator.getitem", {call, static_cast<int64_t>(i)});
      e.outputs[i]->replace_all_uses_with(item);
    }
  }
  for (auto it = sorted.rbegin(); it != sorted.rend(); ++it) g.erase_node(*it);
}

// The order legalize_graph puts the nodes in; shorter than the graph when it
// has a cycle.
std::vector<Node*> legal_order(const GraphIndex& index) {
  std::vector<int> indegree(index.size(), 0);
  for (int n = 0; n < index.size(); ++n) {
    for (int u : index.users(n)) ++indegree[u];
  }
  std::deque<int> ready;
  for (int n = 0; n < index.size(); ++n) {
    if (indegree[n] == 0) ready.push_back(n);
  }
  std::vector<Node*> order;
  while (!ready.empty()) {
    int n = ready.front();
    ready.pop_front();
    order.push_back(index.node(n));
    for (int u : index.users(n)) {
      if (--indegree[u] == 0) ready.push_back(u);
    }
  }
  return order;
}

}  // namespace

void legalize_graph(Graph& graph) {
  GraphIndex index(graph);
  std::vector<Node*> order = legal_order(index);
  if (order.size() != static_cast<size_t>(index.size())) {
    throw FxError(cat("legalize_graph: the graph has a cycle (",
                      index.size() - order.size(),
                      " nodes cannot be ordered)"));
  }
  if (order.empty()) return;
  if (graph.first() != order[0]) graph.first()->prepend(order[0]);
  for (size_t i = 1; i < order.size(); ++i) {
    if (order[i - 1]->next() != order[i]) order[i - 1]->append(order[i]);
  }
}

std::vector<FusedSubgraph> fuse_by_partitions(
    Graph& graph, const std::vector<std::vector<Node*>>& partitions,
    std::string_view prefix) {
  {
    GraphIndex index(graph);
    std::vector<int> part = partition_of(index, partitions);
    check_fusable(index, part, partitions.size());
  }
  std::vector<FusedSubgraph> fused;
  for (size_t k = 0; k < partitions.size(); ++k) {
    std::vector<Node*> sorted = topo_sort(partitions[k]);
    Extracted e = extract(sorted);
    std::string name = cat(prefix, k);
    replace_in_parent(graph, name, e, sorted);
    fused.push_back({std::move(name), std::move(e.graph)});
  }
  legalize_graph(graph);
  return fused;
}

}  // namespace fx
