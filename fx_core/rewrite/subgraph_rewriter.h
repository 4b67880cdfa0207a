// fx::replace_pattern: the subgraph rewriter (torch.fx's
// subgraph_rewriter.replace_pattern and replace_pattern_with_filters).
//
// Finds every non-overlapping occurrence of `pattern` in a graph (see
// SubgraphMatcher) and replaces each, in graph order, with a copy of
// `replacement`: the replacement's placeholders take the values the
// pattern's placeholders matched (in order), its nodes are inserted just
// before the first user of the match's returned nodes, the uses of each
// returned node go to the matching value of the replacement's output, and
// the matched nodes are erased. The result prints and generates the same
// code as torch.fx for the same rewrite.
//
// Pattern and replacement are Graphs (as torch.fx's symbolic_trace(pattern)
// .graph would give): placeholders in the order of the function's
// parameters, one output. The replacement must have as many placeholders as
// the pattern and return as many values as the pattern returns.
//
// Beyond torch.fx:
//  - RewriteOptions::ignore_literals: literals of the pattern match any
//    literal (`x + 1` matches `x + 3`); the replacement keeps its own
//    literals;
//  - RewriteOptions::match_modules_by_type: a call_module pattern node
//    matches a call_module node whose module has the same type ("conv"
//    matches "layer1.0.conv1" when both are torch.nn.Conv2d), the type of
//    the pattern's module taken from `pattern_module` or, without one, the
//    target itself ("torch.nn.Conv2d"). A replacement call_module or
//    get_attr whose target is a pattern call_module's target is retargeted
//    to the module the match found;
//  - RewriteOptions::normalize_arguments: call_function and call_method
//    nodes whose target the OpRegistry knows are compared by their arguments
//    bound to its signature (defaults filled in): torch.add(x, y) matches
//    torch.add(x, other=y) and torch.add(x, y, alpha=1), x.clamp(0.0)
//    matches x.clamp(min=0.0);
//  - RewriteOptions::propagate_meta: each node that replaces a returned node
//    gets that node's meta entries it does not set itself, and every other
//    replacement node the matched anchor's entries under `shared_meta_keys`
//    (where the code came from: stack_trace, nn_module_stack, source_fn);
//  - a returned node without users gets its replacement after the match
//    (torch.fx asserts);
//  - long graphs: torch.fx 1.13's cycle check recurses along every path out
//    of a match to the end of the graph (RecursionError once such a path is
//    longer than Python's recursion limit, e.g. 10k chained nodes, and
//    quadratic time); here it is iterative and stops at the match's last
//    node.
// As torch.fx 2 (not 1.13), a returned match's placeholders map to their
// current values when an earlier replacement replaced them.
//
// Patterns and replacements written as C++ functions of fx::Value (traced)
// are in pattern_function.h.
//
// Costs: O(graph + matches x (pattern + replacement + their users)), plus
// sorting the first anchor's candidates; nothing scans the graph per match
// (tools/bench/rewrite_benchmark.cc).
//
// Errors (FxError, the graph unchanged unless said otherwise): a pattern the
// matcher refuses, a replacement whose placeholder or output count does not
// fit the pattern, a replacement output that is not a node. Filters run
// before any change.
#ifndef FX_CORE_REWRITE_SUBGRAPH_REWRITER_H_
#define FX_CORE_REWRITE_SUBGRAPH_REWRITER_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/ir/argument.h"
#include "fx_core/ir/graph.h"
#include "fx_core/rewrite/subgraph_matcher.h"

namespace fx {

class GraphModule;

// One replacement made (torch.fx's ReplacedPatterns; Match without
// `replacements`).
struct ReplacedPatterns {
  // The pattern's first anchor (a pattern node, as torch.fx's `anchor`).
  const Node* anchor = nullptr;
  // The graph node the first anchor matched. Erased by the rewrite, it stays
  // readable (name, erased()) until the graph purges erased nodes.
  Node* matched_anchor = nullptr;
  // Pattern node -> graph value matched (erased nodes for the compute nodes;
  // placeholders map to their current value).
  std::vector<std::pair<const Node*, Argument>> nodes_map;
  // The nodes copied from the replacement into the graph, in order.
  std::vector<Node*> replacements;
  // Keeps a pattern the rewriter traced itself (pattern_function.h) alive
  // for `anchor` and nodes_map's keys; empty when the caller owns the
  // pattern.
  std::shared_ptr<const void> pattern_owner;
};

// A match is replaced only when every filter accepts it (torch.fx's
// match_filters: the match, the original graph, the pattern graph).
using MatchFilter = std::function<bool(
    const InternalMatch& match, const Graph& original, const Graph& pattern)>;

struct RewriteOptions {
  bool ignore_literals = false;
  bool match_modules_by_type = false;
  bool normalize_arguments = false;
  bool propagate_meta = true;
  std::vector<std::string> shared_meta_keys = {"stack_trace", "nn_module_stack",
                                               "source_fn"};
  // For match_modules_by_type: the module owning the pattern's call_module
  // targets (optional, see above).
  const GraphModule* pattern_module = nullptr;
};

// Rewrites `graph` in place. `owner` (optional) is the module owning graph's
// call_module targets, for match_modules_by_type.
std::vector<ReplacedPatterns> replace_pattern_in_graph(
    Graph& graph, const Graph& pattern, const Graph& replacement,
    const std::vector<MatchFilter>& match_filters = {},
    const RewriteOptions& options = {}, const GraphModule* owner = nullptr);

// torch.fx's replace_pattern: rewrites gm.graph() and recompiles gm.
std::vector<ReplacedPatterns> replace_pattern(
    GraphModule& gm, const Graph& pattern, const Graph& replacement,
    const RewriteOptions& options = {});

// torch.fx's replace_pattern_with_filters.
std::vector<ReplacedPatterns> replace_pattern_with_filters(
    GraphModule& gm, const Graph& pattern, const Graph& replacement,
    const std::vector<MatchFilter>& match_filters,
    const RewriteOptions& options = {});

// Pattern and replacement as modules (torch.fx's replace_pattern with
// nn.Module pattern and replacement): the pattern module tells the module
// types for match_modules_by_type (options.pattern_module is set to it), and
// after the rewrite every call_module / get_attr target gm lacks is copied
// from the replacement module (a clone, as torch.fx's deepcopy). Throws
// FxError (torch.fx's message) for a target neither has; the graph is then
// rewritten already.
std::vector<ReplacedPatterns> replace_pattern(GraphModule& gm,
                                              const GraphModule& pattern,
                                              const GraphModule& replacement,
                                              RewriteOptions options = {});
std::vector<ReplacedPatterns> replace_pattern_with_filters(
    GraphModule& gm, const GraphModule& pattern, const GraphModule& replacement,
    const std::vector<MatchFilter>& match_filters, RewriteOptions options = {});

}  // namespace fx

#endif  // FX_CORE_REWRITE_SUBGRAPH_REWRITER_H_
