// What torch 1.13's retracing passes do to a graph besides their own edit:
// symbolic_trace (merge_matmul) and the Transformer (remove_dropout) record
// every node afresh into a new graph, so each node is named again from its
// target in graph order, loses its type annotation, and the graph's
// namespace holds the live names only (an erased node's name is free again).
#ifndef PLUGINS_OPTIMIZATION_RETRACE_H_
#define PLUGINS_OPTIMIZATION_RETRACE_H_

#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"

namespace fx_optimization {

// The nodes (in graph order, skipping `removed`) a retrace names otherwise,
// each with the name it gives: found on a scratch graph whose nodes the host
// names as it names a traced node. On a host older than C ABI version 11
// (no renaming) a non-empty answer is refused with FX_FAILED_PRECONDITION,
// prefixed by `pass` and naming the first node, before anything changes.
using Renames = std::vector<std::pair<fxp::Node, std::string>>;
Renames retrace_names(const fxp::Graph& g,
                      const std::unordered_set<FxNode*>& removed,
                      const std::string& pass);

// The call_function nodes symbolic_trace runs rather than records (no node
// among their arguments: make_fx's `empty`, `zeros`, ...), which its
// retrace drops, in graph order. One with users, whose value the retrace
// would make a tensor constant, is refused with FX_FAILED_PRECONDITION,
// prefixed by `pass` and naming it, before anything changes. Erase them
// before apply_retrace_names, and pass them to retrace_names as removed.
std::vector<fxp::Node> untraced_calls(const fxp::Graph& g,
                                      const std::string& pass);

// Gives the nodes their new names (after the caller erased what it
// removed) and resets the namespace to the live names, as a graph torch
// built anew leaves it (a retrace, extract_subgraph's and
// replace_target_nodes_with's new graph). On an older host, where
// `renames` is empty, the namespace is left as it is.
void apply_retrace_names(fxp::Graph& g, const Renames& renames);

// A node a pass's new graph makes, as torch's new graph would: its opcode,
// target and the name asked for (empty: named from the target, as a
// placeholder is).
struct FreshNode {
  FxOpcode op;
  std::string target;
  std::string name;
};
// The names a graph built anew gives `nodes`, made in that order, then its
// output's: found on a scratch graph the host names alike.
std::vector<std::string> fresh_graph_names(const std::vector<FreshNode>& nodes);

// Gives the graph's nodes, in graph order, the names of `names` (one a
// node, as fresh_graph_names gives them) where they differ, then resets the
// namespace as apply_retrace_names does: the graph is named as torch's new
// graph would be.
void apply_fresh_graph_names(fxp::Graph& g,
                             const std::vector<std::string>& names);

// The annotations symbolic_trace's retrace keeps: a placeholder's and the
// output's stay (the generated forward's signature carries them), every
// other goes. Returns whether one went.
bool clear_traced_types(fxp::Graph& g);

// Whether the generated code wraps the call_function node's target
// (`torch.fx._symbolic_trace.wrap("len")`): its meta['is_wrapped'], else
// the host's default for a node without one (a target outside torch,
// operator and builtins.getattr).
bool wrapped_in_code(const fxp::Node& n);
// A node torch records afresh (a Transformer's call, create_node) carries
// no meta['is_wrapped']: when `n`'s code wraps its target, the flag is set
// false. Returns whether it was.
bool unwrap(fxp::Node& n);

// symbolic_trace's retrace of the graph, as torch's fuse and merge_matmul
// start: the untraced calls erased, nodes renamed, the namespace reset and
// the annotations cleared as above (meta is kept). Returns whether the
// graph changed.
bool symbolic_retrace(fxp::Graph& g, const std::string& pass);

// Refuses, prefixed by `pass`, before anything changes, on a host older than
// C ABI version 11: the pass always renames.
void require_renaming(const std::string& pass);

}  // namespace fx_optimization

#endif  // PLUGINS_OPTIMIZATION_RETRACE_H_
