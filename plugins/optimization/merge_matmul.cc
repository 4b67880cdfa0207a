// merge_matmul: torch 1.13's torch.fx.experimental.merge_matmul.merge_matmul.
//
// The torch.matmul call_function nodes are grouped by their right-hand
// operand (a get_attr node by its target, so two reads of one attribute are
// one operand; any other node by itself), groups in the order of their first
// matmul. Each group of two or more matmuls that are pairwise independent
// (torch's may_depend_on: a search up to six inputs deep, assuming a
// dependency where it gives up; decided here in one walk per matmul instead
// of one per pair) becomes
//   cat = torch.cat([lhs...]); matmul = torch.matmul(cat, rhs)
//   split = torch.fx.experimental.merge_matmul.split_result_tensors(
//       matmul, [lhs...])
//   getitem_i = split[i]
// (a fresh get_attr of the attribute as the right operand when it is one),
// each old matmul's users read its getitem and the old matmul goes; then the
// whole graph is sorted as torch's legalize_graph sorts it (Kahn's algorithm,
// breadth first, in graph order with the new nodes at the end, users in
// their recorded order), which also leaves every node's users in graph order
// as legalize_graph's copy does.
//
// Like torch's pass, which starts with symbolic_trace(module), the graph is
// retraced: every type annotation but the placeholders' and the output's
// goes, nodes the retrace names otherwise are renamed, and the namespace
// holds the live names only, so the new nodes get torch's names (a name a
// node erased by an earlier pass had may be taken again). legalize_graph's
// copy leaves a fresh namespace too. Meta is kept (the retrace would drop
// it).
//
// torch 1.13 cannot merge a second group: legalize_graph gives the module a
// new graph while the remaining groups still hold the old graph's nodes,
// and the next legalize_graph raises KeyError. By default the pass refuses
// there as torch fails, naming both groups. Option all_groups=true merges
// every group and sorts the graph once, at the end (torch would sort after
// each group: a pass over the graph per group); the new nodes then get the
// host's names (which never reuse an erased node's name). torch has no
// counterpart to compare that with.
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/plugin_util.h"
#include "plugins/optimization/passes.h"
#include "plugins/optimization/retrace.h"

namespace fx_optimization {
namespace {

using fxp::Arg;
using fxp::Graph;
using fxp::Node;

constexpr const char* kPass = "merge_matmul";
constexpr const char* kMatmul = "torch.matmul";
constexpr const char* kSplit =
    "torch.fx.experimental.merge_matmul.split_result_tensors";

[[noreturn]] void refuse(const std::string& what) {
  fx_plugins::refuse_in(kPass, FX_FAILED_PRECONDITION, what);
}

// A matmul operand as torch's pass keys it: (null, target) for a get_attr
// node, (node, "") for any other.
using Operand = std::pair<FxNode*, std::string>;

Node operand_node(const Node& mm, size_t i) {
  if (!mm.arg(i).is_node()) {
    refuse("'" + std::string(mm.name()) + "' multiplies a constant (torch's " +
           "merge_matmul reads each operand's .op)");
  }
  return mm.arg(i).node();
}

Operand operand_of(const Node& n) {
  if (n.op() == FX_OP_GET_ATTR) return {nullptr, std::string(n.target())};
  return {n.get(), ""};
}

struct Group {
  Operand rhs;
  std::vector<Node> matmuls;
};

std::vector<Group> matmuls_by_rhs(const Graph& g) {
  std::vector<Group> groups;
  std::map<Operand, size_t> index;
  for (Node n : g) {
    if (n.op() != FX_OP_CALL_FUNCTION || n.target() != kMatmul) continue;
    if (n.num_args() != 2) {
      refuse("'" + std::string(n.name()) + "' has " +
             std::to_string(n.num_args()) +
             " positional arguments; torch's merge_matmul unpacks two");
    }
    operand_node(n, 0);
    Operand rhs = operand_of(operand_node(n, 1));
    auto [it, added] = index.emplace(rhs, groups.size());
    if (added) groups.push_back({rhs, {}});
    groups[it->second].matmuls.push_back(n);
  }
  return groups;
}

// What torch's may_depend_on(a, b) finds from `a`, for every b at once.
// Its search returns true on reaching b, false on a node without inputs,
// and true (giving up) on a node that still has inputs at depth six. So a
// depends on b when b is within six inputs of it (a itself included), and
// on every node when seven inputs lead up from it. Each node is visited
// once per depth at most: a visit deeper in the search (less depth left)
// can only find more, so a node is visited again only with less depth left.
struct Ancestry {
  bool gives_up = false;
  std::unordered_set<FxNode*> near;  // within six inputs
};

Ancestry ancestry(const Node& a) {
  constexpr int kSearchDepth = 6;
  Ancestry out;
  std::unordered_map<FxNode*, int> least_left;
  std::vector<std::pair<Node, int>> todo{{a, kSearchDepth}};
  while (!todo.empty()) {
    auto [n, left] = todo.back();
    todo.pop_back();
    auto [it, fresh] = least_left.emplace(n.get(), left);
    if (!fresh) {
      if (it->second <= left) continue;
      it->second = left;
    }
    out.near.insert(n.get());
    std::vector<Node> inputs = n.all_input_nodes();
    if (inputs.empty()) continue;
    if (left == 0) {
      out.gives_up = true;
      return out;
    }
    for (const Node& input : inputs) todo.emplace_back(input, left - 1);
  }
  return out;
}

// torch's are_nodes_independent: no pair (a, b) where may_depend_on(a, b)
// or may_depend_on(b, a). Linear in the matmuls' six-deep ancestries, where
// torch searches once per ordered pair.
bool independent(const std::vector<Node>& matmuls) {
  std::unordered_set<FxNode*> group;
  for (const Node& mm : matmuls) group.insert(mm.get());
  for (const Node& mm : matmuls) {
    Ancestry found = ancestry(mm);
    if (found.gives_up) return false;
    for (FxNode* n : found.near) {
      if (n != mm.get() && group.count(n) != 0) return false;
    }
  }
  return true;
}

// torch's legalize_graph on `order` (the graph's nodes in torch's list
// order): Kahn's algorithm, breadth first. The graph is rearranged to the
// result and each node's arguments set again in that order, so that every
// node's users are in graph order, as in legalize_graph's copy.
void legalize(Graph& g, const std::vector<Node>& order) {
  std::unordered_map<FxNode*, size_t> indegree;
  for (const Node& n : order) indegree[n.get()] = 0;
  for (const Node& n : order) {
    for (const Node& user : n.users()) ++indegree[user.get()];
  }
  std::deque<Node> ready;
  for (const Node& n : order) {
    if (indegree[n.get()] == 0) ready.push_back(n);
  }
  std::vector<Node> sorted;
  sorted.reserve(order.size());
  while (!ready.empty()) {
    Node cur = ready.front();
    ready.pop_front();
    sorted.push_back(cur);
    for (const Node& user : cur.users()) {
      if (--indegree[user.get()] == 0) ready.push_back(user);
    }
  }
  if (sorted.size() != order.size()) refuse("the graph has a cycle");
  Node first = *g.begin();
  if (first != sorted[0]) first.prepend(sorted[0]);
  for (size_t i = 1; i < sorted.size(); ++i) sorted[i - 1].append(sorted[i]);
  for (Node n : sorted) {
    std::vector<Arg> args;
    for (const fxp::ArgView& a : n.args()) args.emplace_back(a);
    n.set_args(args);
  }
}

// Merges `group`, the new nodes at the end of the graph. Returns the new
// nodes in order of creation; the old matmuls go into `erased`.
std::vector<Node> merge(Graph& g, const Group& group,
                        std::unordered_set<FxNode*>* erased) {
  std::vector<Arg> lhs;
  for (const Node& mm : group.matmuls) lhs.emplace_back(mm.arg(0).node());
  std::vector<Node> made;
  Node rhs = group.rhs.first != nullptr
                 ? Node(group.rhs.first)
                 : made.emplace_back(g.get_attr(group.rhs.second.c_str()));
  Node cat = made.emplace_back(g.call_function("torch.cat", {Arg::list(lhs)}));
  Node merged = made.emplace_back(g.call_function(kMatmul, {cat, rhs}));
  Node split =
      made.emplace_back(g.call_function(kSplit, {merged, Arg::list(lhs)}));
  for (size_t i = 0; i < lhs.size(); ++i) {
    made.push_back(g.call_function("operator.getitem",
                                   {split, Arg(static_cast<int64_t>(i))}));
  }
  for (size_t i = 0; i < group.matmuls.size(); ++i) {
    Node old = group.matmuls[i];
    old.replace_all_uses_with(made[made.size() - lhs.size() + i]);
    g.erase_node(old);
    erased->insert(old.get());
  }
  return made;
}

std::string describe(const Group& group) {
  std::string text = "'" + std::string(group.matmuls[0].name()) + "'";
  for (size_t i = 1; i < group.matmuls.size(); ++i) {
    text += ", '" + std::string(group.matmuls[i].name()) + "'";
  }
  return text;
}

}  // namespace

bool merge_matmul(Graph& g, const fxp::Options& options) {
  const bool all_groups = options.get_bool("all_groups");
  bool changed = symbolic_retrace(g, kPass);
  std::string merged;  // the merged group's matmuls, named before they go
  // torch's list order for legalize_graph: the graph's nodes, then the new
  // ones in order of creation, less the erased matmuls.
  std::vector<Node> listed = g.nodes();
  std::unordered_set<FxNode*> erased;
  for (const Group& group : matmuls_by_rhs(g)) {
    if (group.matmuls.size() < 2 || !independent(group.matmuls)) continue;
    if (!merged.empty() && !all_groups) {
      refuse("the matmuls " + describe(group) +
             " share a right operand too, after the merged " + merged +
             ": torch 1.13's merge_matmul raises KeyError on a second group "
             "(it merges it with the nodes of the graph legalize_graph "
             "replaced); all_groups=true merges every group");
    }
    merged = describe(group);
    std::vector<Node> made = merge(g, group, &erased);
    listed.insert(listed.end(), made.begin(), made.end());
  }
  if (merged.empty()) return changed;
  std::vector<Node> live;
  live.reserve(listed.size());
  for (const Node& n : listed) {
    if (erased.count(n.get()) == 0) live.push_back(n);
  }
  legalize(g, live);
  apply_retrace_names(g, {});  // legalize_graph's copy: a fresh namespace
  return true;
}

}  // namespace fx_optimization
