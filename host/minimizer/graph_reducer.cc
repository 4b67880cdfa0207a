#include "host/minimizer/graph_reducer.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx::host {

GraphFile copy_of(const GraphFile& file) {
  GraphFile copy;
  copy.graph = file.graph->snapshot();
  copy.modules = file.modules;
  copy.weights = file.weights;
  copy.directory = file.directory;
  return copy;
}

namespace {

Node* find_named(const Graph& graph, std::string_view name) {
  for (Node* node : graph.nodes()) {
    if (node->name() == name) return node;
  }
  return nullptr;
}

bool removable(const Node& node) {
  return node.op() != Opcode::kPlaceholder && node.op() != Opcode::kOutput;
}

void drop_unused_placeholders(Graph& graph) {
  for (Node* node : graph.nodes().to_vector()) {
    if (node->op() == Opcode::kPlaceholder && node->num_users() == 0) {
      graph.erase_node(node);
    }
  }
}

// `file` without the node called `name`, its uses replaced by its input
// `choice` (or, past its inputs, a new placeholder); nullopt when that
// choice does not exist or the result does not lint.
std::optional<GraphFile> without_node(const GraphFile& file,
                                      const std::string& name, size_t choice) {
  GraphFile candidate = copy_of(file);
  Graph& graph = *candidate.graph;
  Node* node = find_named(graph, name);
  if (node == nullptr) return std::nullopt;
  std::vector<Node*> inputs = node->all_input_nodes();
  if (choice > inputs.size()) return std::nullopt;
  try {
    Node* replacement = nullptr;
    if (choice < inputs.size()) {
      replacement = inputs[choice];
    } else {
      auto at = graph.inserting_before(graph.first());
      replacement = graph.placeholder(cat(name, "_input"));
    }
    node->replace_all_uses_with(replacement);
    graph.erase_node(node);
    graph.eliminate_dead_code();
    drop_unused_placeholders(graph);
    graph.lint();
  } catch (const FxError&) {
    return std::nullopt;
  }
  return candidate;
}

// One round: every node, last to first; whether one was removed.
bool reduce_round(ReduceResult& result, const FailureProbe& probe) {
  bool removed = false;
  std::vector<std::string> names;
  for (Node* node : result.file.graph->nodes()) {
    if (removable(*node)) names.emplace_back(node->name());
  }
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    for (size_t choice = 0;; ++choice) {
      Node* node = find_named(*result.file.graph, *it);
      if (node == nullptr || choice > node->all_input_nodes().size()) break;
      std::optional<GraphFile> candidate =
          without_node(result.file, *it, choice);
      if (!candidate) continue;
      ++result.attempts;
      if (probe(*candidate) != result.failure) continue;
      result.file = *std::move(candidate);
      removed = true;
      break;
    }
  }
  return removed;
}

}  // namespace

absl::StatusOr<ReduceResult> reduce_graph(const GraphFile& file,
                                          const FailureProbe& probe) {
  ReduceResult result;
  result.file = copy_of(file);
  result.nodes_before = file.graph->size();
  result.failure = probe(result.file);
  if (result.failure.empty()) {
    return absl::FailedPreconditionError(
        "the graph does not fail: nothing to reduce");
  }
  while (reduce_round(result, probe)) {
  }
  result.nodes_after = result.file.graph->size();
  return result;
}

}  // namespace fx::host
