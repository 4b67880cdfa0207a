// fx::SubgraphMatcher: finds the places where a pattern Graph occurs in a
// larger Graph (torch.fx's passes.utils.matcher_utils.SubgraphMatcher).
//
// The pattern is a Graph whose placeholders are wildcards (they match any
// value: a node or a literal argument) and whose output node lists the
// values the match returns. Matching starts at the pattern's anchors (the
// nodes whose only user is the output) and walks both graphs backwards
// through args and kwargs at once, as torch.fx does:
//  - a pattern node matches a graph node with the same opcode and target
//    (call_module optionally by module type, see MatcherOptions);
//  - args match structurally (lists and tuples element by element), kwargs
//    must have the same keys (or, with MatcherOptions::normalized_arguments,
//    the arguments bound to the target's signature must match); literals must
//    be equal and of the same kind (1 does not match 1.0), unless
//    MatcherOptions::ignore_literals;
//  - two pattern nodes never match the same graph node.
// A match is kept when it is self-contained (only placeholders and returned
// nodes may be used outside it) and fusing it would not create a cycle; with
// remove_overlapping_matches, a match that shares a non-placeholder node with
// an earlier one (in the order of the graph's anchor candidates) is dropped.
//
// Cost: candidates for the first anchor come from the graph's target index
// (no scan for call_function / call_method / get_attr anchors); each is
// checked in O(pattern size + the users of its nodes). Candidates for further
// anchors are found from the nodes already matched, so multi-output patterns
// do not try every pair of anchor candidates as torch.fx does.
//
// The matcher knows nothing of LibTorch: matching call_module by module type
// asks the callbacks of MatcherOptions (replace_pattern fills them from the
// GraphModules).
#ifndef FX_CORE_REWRITE_SUBGRAPH_MATCHER_H_
#define FX_CORE_REWRITE_SUBGRAPH_MATCHER_H_

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/ir/argument.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"

namespace fx {

// One occurrence of a pattern in a graph (torch.fx's InternalMatch).
struct InternalMatch {
  // The pattern's anchors (pattern nodes; torch.fx's `anchors`).
  std::vector<const Node*> anchors;
  // Pattern node -> the graph value it matched, in the order matched. A
  // placeholder may match a literal argument (an Argument that is not a
  // node); every other pattern node matches a graph node.
  std::vector<std::pair<const Node*, Argument>> nodes_map;
  // What each pattern placeholder matched, in the pattern's placeholder order.
  std::vector<Argument> placeholder_nodes;
  // The graph nodes the pattern's output returns, in its order (distinct,
  // as torch.fx's output.all_input_nodes).
  std::vector<Node*> returning_nodes;

  // The graph node matched by `pattern_node`, or nullptr (unmatched, or a
  // placeholder that matched a literal).
  Node* node_for(const Node* pattern_node) const;
  // The graph value matched by `pattern_node`, or nullptr.
  const Argument* value_for(const Node* pattern_node) const;
};

struct MatcherOptions {
  // torch.fx's options: match the output node too / match placeholders by
  // opcode (not as wildcards) / keep only the first of overlapping matches.
  bool match_output = false;
  bool match_placeholder = false;
  bool remove_overlapping_matches = true;
  // Beyond torch.fx 1.13: a literal argument of the pattern matches any
  // literal (x + 1 matches x + 3). A literal never matches a node.
  bool ignore_literals = false;
  // Beyond torch.fx: when both callbacks are set, a call_module pattern node
  // matches a call_module graph node whose module type (as the callbacks
  // report it, e.g. "torch.nn.Conv2d") is the same, whatever the targets.
  // An empty type from either callback falls back to comparing targets.
  std::function<std::string(const Node&)> pattern_module_type;
  std::function<std::string(const Node&)> graph_module_type;
  // Beyond torch.fx: a node's arguments bound to its target's signature, one
  // per parameter with defaults filled in, or std::nullopt when it has none
  // or they do not bind. When it gives both nodes' arguments, those are
  // compared instead of args and kwargs as written, so torch.add(x, y)
  // matches torch.add(x, other=y) and torch.add(x, y, alpha=1).
  std::function<std::optional<ArgumentList>(const Node&)> normalized_arguments;
};

class SubgraphMatcher {
 public:
  // Throws FxError for an empty pattern, a pattern without an output node,
  // or a pattern with dead code (a node other than the output without
  // users), as torch.fx refuses them. The pattern must outlive the matcher.
  explicit SubgraphMatcher(const Graph& pattern, MatcherOptions options = {});

  // The matches of the pattern in `graph`, in the order of the graph's
  // candidates for the first anchor (graph order).
  std::vector<InternalMatch> match(const Graph& graph) const;

  const Graph& pattern() const { return pattern_; }
  const std::vector<const Node*>& pattern_anchors() const { return anchors_; }
  const std::vector<const Node*>& pattern_placeholder_nodes() const {
    return placeholders_;
  }
  const std::vector<const Node*>& pattern_returning_nodes() const {
    return returning_;
  }
  const MatcherOptions& options() const { return options_; }

 private:
  class Search;
  bool nodes_are_equal(const Node& pn, const Node& gn) const;

  const Graph& pattern_;
  MatcherOptions options_;
  std::vector<const Node*> placeholders_;
  std::vector<const Node*> returning_;
  std::vector<const Node*> anchors_;
};

}  // namespace fx

#endif  // FX_CORE_REWRITE_SUBGRAPH_MATCHER_H_
