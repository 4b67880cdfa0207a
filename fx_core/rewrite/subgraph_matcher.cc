#include "fx_core/rewrite/subgraph_matcher.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "fx_core/support/error.h"

namespace fx {

Node* InternalMatch::node_for(const Node* pattern_node) const {
  const Argument* v = value_for(pattern_node);
  return v != nullptr && v->is_node() ? v->as_node() : nullptr;
}

const Argument* InternalMatch::value_for(const Node* pattern_node) const {
  for (const auto& [pn, value] : nodes_map) {
    if (pn == pattern_node) return &value;
  }
  return nullptr;
}

namespace {

bool is_placeholder_or_output(const Node* n) {
  return n->op() == Opcode::kPlaceholder || n->op() == Opcode::kOutput;
}

// True when `arg` references no node.
bool is_literal(const Argument& arg) {
  bool found = false;
  for_each_node(arg, [&](Node*) { found = true; });
  return !found;
}

bool is_container(const Argument& a) {
  return a.is_sequence() || a.is_slice() || a.is_dict();
}

}  // namespace

// The state of one search: pattern node -> graph value, with an undo log so
// a failed anchor candidate rolls back in O(what it added).
class SubgraphMatcher::Search {
 public:
  Search(const SubgraphMatcher& m, const Graph& graph) : m_(m), graph_(graph) {}

  std::vector<InternalMatch> run();

 private:
  bool match_nodes(const Node* pn, Node* gn);
  bool match_args(const Argument& pa, const Argument& ga);
  void add(const Node* pn, Argument value) {
    if (value.is_node()) used_.insert(value.as_node());
    map_.emplace(pn, std::move(value));
    order_.push_back(pn);
  }
  void rollback(size_t size) {
    while (order_.size() > size) {
      auto it = map_.find(order_.back());
      if (it->second.is_node()) used_.erase(it->second.as_node());
      map_.erase(it);
      order_.pop_back();
    }
  }
  void backtrack(size_t anchor_index);
  void record_match();
  const std::vector<Node*>& all_candidates(size_t anchor_index);
  std::vector<Node*> candidates(size_t anchor_index);
  bool is_contained(const InternalMatch& match) const;
  bool validate_partition(const InternalMatch& match) const;

  const SubgraphMatcher& m_;
  const Graph& graph_;
  absl::flat_hash_map<const Node*, Argument> map_;
  std::vector<const Node*> order_;
  absl::flat_hash_set<const Node*> used_;
  std::vector<InternalMatch> matches_;
  // Per anchor: every graph node it could match (computed when first needed)
  // and the pattern distance from each pattern node to it.
  std::vector<std::optional<std::vector<Node*>>> all_candidates_;
  std::vector<absl::flat_hash_map<const Node*, int>> distance_;
};

SubgraphMatcher::SubgraphMatcher(const Graph& pattern, MatcherOptions options)
    : pattern_(pattern), options_(std::move(options)) {
  if (pattern.size() == 0) {
    throw FxError(
        "SubgraphMatcher cannot be initialized with an empty pattern");
  }
  const Node* output = pattern.output_node();
  if (output == nullptr) {
    throw FxError("SubgraphMatcher needs a pattern with an output node");
  }
  for (const Node* n : pattern.nodes()) {
    if (n->op() != Opcode::kOutput && n->num_users() == 0) {
      throw FxError(
          "SubgraphMatcher cannot be initialized with an pattern with dead "
          "code");
    }
    if (n->op() == Opcode::kPlaceholder) placeholders_.push_back(n);
  }
  for (const Node* n : output->all_input_nodes()) returning_.push_back(n);
  if (options_.match_output) {
    anchors_.push_back(output);
  } else {
    for (const Node* n : returning_) {
      if (n->num_users() == 1) anchors_.push_back(n);
    }
  }
}

bool SubgraphMatcher::nodes_are_equal(const Node& pn, const Node& gn) const {
  if (!options_.match_placeholder && pn.op() == Opcode::kPlaceholder) {
    return true;
  }
  if (pn.op() != gn.op()) return false;
  if (pn.op() == Opcode::kPlaceholder || pn.op() == Opcode::kOutput) {
    return true;
  }
  if (pn.op() == Opcode::kCallModule && options_.pattern_module_type &&
      options_.graph_module_type) {
    std::string ptype = options_.pattern_module_type(pn);
    if (!ptype.empty()) {
      std::string gtype = options_.graph_module_type(gn);
      if (!gtype.empty()) return ptype == gtype;
    }
  }
  return pn.target() == gn.target();
}

std::vector<InternalMatch> SubgraphMatcher::match(const Graph& graph) const {
  return Search(*this, graph).run();
}

bool SubgraphMatcher::Search::match_nodes(const Node* pn, Node* gn) {
  auto it = map_.find(pn);
  if (it != map_.end()) {
    return it->second.is_node() && it->second.as_node() == gn;
  }
  if (used_.contains(gn)) return false;
  if (!m_.nodes_are_equal(*pn, *gn)) return false;
  add(pn, Argument(gn));
  if (pn->op() == Opcode::kPlaceholder) return true;

  if (m_.options_.normalized_arguments &&
      (pn->op() == Opcode::kCallFunction || pn->op() == Opcode::kCallMethod ||
       pn->op() == Opcode::kCallModule)) {
    std::optional<ArgumentList> pbound = m_.options_.normalized_arguments(*pn);
    std::optional<ArgumentList> gbound =
        pbound ? m_.options_.normalized_arguments(*gn) : std::nullopt;
    if (pbound && gbound && pbound->size() == gbound->size()) {
      for (size_t i = 0; i < pbound->size(); ++i) {
        if (!match_args((*pbound)[i], (*gbound)[i])) return false;
      }
      return true;
    }
  }

  const Node::Args& pargs = pn->args();
  const Node::Args& gargs = gn->args();
  if (pargs.size() != gargs.size()) return false;
  const Node::Kwargs& pkw = pn->kwargs();
  const Node::Kwargs& gkw = gn->kwargs();
  if (pkw.size() != gkw.size()) return false;
  for (const auto& kv : pkw) {
    if (find_item(gkw, kv.first) == nullptr) return false;
  }
  for (size_t i = 0; i < pargs.size(); ++i) {
    if (!match_args(pargs[i], gargs[i])) return false;
  }
  for (const auto& kv : pkw) {
    if (!match_args(kv.second, *find_item(gkw, kv.first))) return false;
  }
  return true;
}

bool SubgraphMatcher::Search::match_args(const Argument& pa,
                                         const Argument& ga) {
  if (pa.is_node() && ga.is_node()) {
    return match_nodes(pa.as_node(), ga.as_node());
  }
  if (pa.is_node()) {
    // A placeholder matches any value, a list or a literal included.
    const Node* pn = pa.as_node();
    if (pn->op() != Opcode::kPlaceholder) return false;
    auto it = map_.find(pn);
    if (it != map_.end()) return it->second == ga;
    add(pn, ga);
    return true;
  }
  if (ga.is_node()) return false;
  if (is_container(pa) && is_container(ga)) {
    if (pa.is_dict() != ga.is_dict()) return false;
    if (pa.is_dict()) {
      const ArgumentDict& pi = pa.items();
      const ArgumentDict& gi = ga.items();
      if (pi.size() != gi.size()) return false;
      for (const auto& kv : pi) {
        const Argument* g = find_item(gi, kv.first);
        if (g == nullptr || !match_args(kv.second, *g)) return false;
      }
      return true;
    }
    // Lists and tuples match each other (torch.fx flattens both); a slice
    // matches only a slice.
    if (pa.is_slice() != ga.is_slice()) return false;
    const ArgumentList& pe = pa.elements();
    const ArgumentList& ge = ga.elements();
    if (pe.size() != ge.size()) return false;
    for (size_t i = 0; i < pe.size(); ++i) {
      if (!match_args(pe[i], ge[i])) return false;
    }
    return true;
  }
  if (m_.options_.ignore_literals) return is_literal(pa) && is_literal(ga);
  return pa.kind() == ga.kind() && pa == ga;
}

const std::vector<Node*>& SubgraphMatcher::Search::all_candidates(
    size_t anchor_index) {
  auto& slot = all_candidates_[anchor_index];
  if (slot) return *slot;
  const Node* anchor = m_.anchors_[anchor_index];
  std::vector<Node*> out;
  const bool wildcard =
      !m_.options_.match_placeholder && anchor->op() == Opcode::kPlaceholder;
  const bool by_type = anchor->op() == Opcode::kCallModule &&
                       m_.options_.pattern_module_type &&
                       m_.options_.graph_module_type;
  if (wildcard || by_type || anchor->op() == Opcode::kPlaceholder ||
      anchor->op() == Opcode::kOutput) {
    for (Node* n : graph_.nodes()) {
      if (m_.nodes_are_equal(*anchor, *n)) out.push_back(n);
    }
  } else {
    out = graph_.find_nodes(anchor->op(), anchor->target());
  }
  slot = std::move(out);
  return *slot;
}

// Candidates for a further anchor: a valid match maps every pattern edge to a
// graph edge, so the anchor's graph node is reachable through users from the
// graph node of any matched pattern node it depends on, within the pattern
// distance. Falls back to every candidate when it depends on none.
std::vector<Node*> SubgraphMatcher::Search::candidates(size_t anchor_index) {
  const Node* anchor = m_.anchors_[anchor_index];
  auto& dist = distance_[anchor_index];
  if (dist.empty()) {
    std::deque<const Node*> queue{anchor};
    dist[anchor] = 0;
    while (!queue.empty()) {
      const Node* n = queue.front();
      queue.pop_front();
      for (const Node* in : n->all_input_nodes()) {
        if (dist.emplace(in, dist[n] + 1).second) queue.push_back(in);
      }
    }
  }
  const Node* best = nullptr;
  int best_rank = std::numeric_limits<int>::max();
  for (const Node* pn : order_) {
    auto d = dist.find(pn);
    if (d == dist.end()) continue;
    const Argument& v = map_.at(pn);
    if (!v.is_node()) continue;
    // Prefer matched compute nodes: a placeholder's graph node may have
    // many users.
    int rank = d->second + (pn->op() == Opcode::kPlaceholder ? 1 << 20 : 0);
    if (rank < best_rank) {
      best_rank = rank;
      best = pn;
    }
  }
  if (best == nullptr) return all_candidates(anchor_index);

  const int depth = dist.at(best);
  std::vector<Node*> out;
  absl::flat_hash_set<const Node*> seen;
  std::vector<Node*> frontier{map_.at(best).as_node()};
  for (int level = 0; level <= depth && !frontier.empty(); ++level) {
    std::vector<Node*> next;
    for (Node* n : frontier) {
      if (!seen.insert(n).second) continue;
      if (m_.nodes_are_equal(*anchor, *n)) out.push_back(n);
      if (level < depth) {
        for (Node* u : n->users()) next.push_back(u);
      }
    }
    frontier = std::move(next);
  }
  std::sort(out.begin(), out.end(),
            [](const Node* a, const Node* b) { return a->is_before(b); });
  return out;
}

void SubgraphMatcher::Search::record_match() {
  InternalMatch match;
  match.anchors = m_.anchors_;
  match.nodes_map.reserve(order_.size());
  for (const Node* pn : order_) match.nodes_map.emplace_back(pn, map_.at(pn));
  for (const Node* pn : m_.placeholders_) {
    auto it = map_.find(pn);
    if (it == map_.end()) return;
    match.placeholder_nodes.push_back(it->second);
  }
  for (const Node* pn : m_.returning_) {
    auto it = map_.find(pn);
    if (it == map_.end() || !it->second.is_node()) return;
    match.returning_nodes.push_back(it->second.as_node());
  }
  if (!is_contained(match) || !validate_partition(match)) return;
  matches_.push_back(std::move(match));
}

void SubgraphMatcher::Search::backtrack(size_t anchor_index) {
  if (anchor_index == m_.anchors_.size()) {
    record_match();
    return;
  }
  const Node* anchor = m_.anchors_[anchor_index];
  const size_t saved = order_.size();
  std::vector<Node*> cands;
  if (anchor_index == 0) {
    cands = all_candidates(0);
  } else {
    cands = candidates(anchor_index);
  }
  for (Node* gn : cands) {
    if (match_nodes(anchor, gn)) backtrack(anchor_index + 1);
    rollback(saved);
  }
}

// Only placeholders and returned nodes may be used outside the match.
bool SubgraphMatcher::Search::is_contained(const InternalMatch& match) const {
  for (const auto& [pn, value] : match.nodes_map) {
    if (pn->op() == Opcode::kPlaceholder || !value.is_node()) continue;
    if (std::find(m_.returning_.begin(), m_.returning_.end(), pn) !=
        m_.returning_.end()) {
      continue;
    }
    for (const Node* user : value.as_node()->users()) {
      if (!used_.contains(user)) return false;
    }
  }
  return true;
}

// torch.fx's fuser_utils.validate_partition: no path leaves the matched
// compute nodes and comes back into them. Paths can only come back to a node
// before the last matched node, so the search stops there.
bool SubgraphMatcher::Search::validate_partition(
    const InternalMatch& match) const {
  absl::flat_hash_set<const Node*> partition;
  const Node* last = nullptr;
  for (const auto& [pn, value] : match.nodes_map) {
    if (is_placeholder_or_output(pn) || !value.is_node()) continue;
    const Node* gn = value.as_node();
    partition.insert(gn);
    if (last == nullptr || last->is_before(gn)) last = gn;
  }
  std::vector<const Node*> stack;
  for (const Node* n : partition) {
    for (const Node* u : n->users()) {
      if (!partition.contains(u)) stack.push_back(u);
    }
  }
  absl::flat_hash_set<const Node*> visited;
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (partition.contains(n)) return false;
    if (!visited.insert(n).second || last->is_before(n)) continue;
    for (const Node* u : n->users()) stack.push_back(u);
  }
  return true;
}

std::vector<InternalMatch> SubgraphMatcher::Search::run() {
  all_candidates_.resize(m_.anchors_.size());
  distance_.resize(m_.anchors_.size());
  if (!m_.anchors_.empty()) backtrack(0);
  if (!m_.options_.remove_overlapping_matches) return std::move(matches_);
  std::vector<InternalMatch> kept;
  absl::flat_hash_set<const Node*> matched;
  for (InternalMatch& match : matches_) {
    bool overlap = false;
    for (const auto& [pn, value] : match.nodes_map) {
      if (!is_placeholder_or_output(pn) && value.is_node() &&
          matched.contains(value.as_node())) {
        overlap = true;
        break;
      }
    }
    if (overlap) continue;
    for (const auto& [pn, value] : match.nodes_map) {
      if (!is_placeholder_or_output(pn) && value.is_node()) {
        matched.insert(value.as_node());
      }
    }
    kept.push_back(std::move(match));
  }
  return kept;
}

}  // namespace fx
