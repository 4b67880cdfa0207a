#include "fx_core/rewrite/subgraph_rewriter.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

// The registered type of the module at `target` in `module`, or "".
std::string module_type(const GraphModule& module, std::string_view target) {
  std::shared_ptr<torch::nn::Module> sub = module.get_submodule(target);
  if (sub == nullptr) return "";
  const ModuleKind* kind = ModuleRegistry::global().find(*sub);
  return kind != nullptr ? kind->type : "";
}

// Remembers each node's module type (replace_pattern asks once per node).
std::function<std::string(const Node&)> cached_module_type(
    std::function<std::string(const Node&)> lookup) {
  auto cache =
      std::make_shared<absl::flat_hash_map<const Node*, std::string>>();
  return [cache, lookup = std::move(lookup)](const Node& n) {
    auto it = cache->find(&n);
    if (it != cache->end()) return it->second;
    return cache->emplace(&n, lookup(n)).first->second;
  };
}

// A signature default as an Argument (the literals signatures use), or
// std::nullopt for anything else.
std::optional<Argument> default_argument(const c10::IValue& v) {
  if (v.isNone()) return Argument();
  if (v.isBool()) return Argument(v.toBool());
  if (v.isInt()) return Argument(v.toInt());
  if (v.isDouble()) return Argument(v.toDouble());
  if (v.isString()) return Argument(v.toStringRef());
  if (v.isList() || v.isTuple()) {
    ArgumentList items;
    const auto elements =
        v.isList() ? v.toListRef().vec() : v.toTupleRef().elements().vec();
    for (const c10::IValue& e : elements) {
      std::optional<Argument> a = default_argument(e);
      if (!a) return std::nullopt;
      items.push_back(std::move(*a));
    }
    return v.isList() ? Argument::list(std::move(items))
                      : Argument::tuple(std::move(items));
  }
  return std::nullopt;
}

// A call's arguments bound to its registered signature, defaults filled in.
std::optional<ArgumentList> normalized_arguments(const Node& n) {
  if (n.op() != Opcode::kCallFunction && n.op() != Opcode::kCallMethod) {
    return std::nullopt;
  }
  const OpDef* def = OpRegistry::global().find(n.op(), n.target());
  if (def == nullptr) return std::nullopt;
  std::vector<std::optional<Argument>> bound;
  std::string error;
  if (!bind_node_arguments(def->schema, n.args(), n.kwargs(), &bound, &error)) {
    return std::nullopt;
  }
  ArgumentList out;
  out.reserve(bound.size());
  for (size_t i = 0; i < bound.size(); ++i) {
    if (bound[i]) {
      out.push_back(std::move(*bound[i]));
      continue;
    }
    const OpParam& param = def->schema.params()[i];
    std::optional<Argument> d = param.has_default
                                    ? default_argument(param.default_value)
                                    : std::optional<Argument>(Argument());
    if (!d) return std::nullopt;
    out.push_back(std::move(*d));
  }
  return out;
}

// Remembers each node's normalized arguments.
std::function<std::optional<ArgumentList>(const Node&)>
cached_normalized_arguments() {
  auto cache = std::make_shared<
      absl::flat_hash_map<const Node*, std::optional<ArgumentList>>>();
  return [cache](const Node& n) {
    auto it = cache->find(&n);
    if (it != cache->end()) return it->second;
    return cache->emplace(&n, normalized_arguments(n)).first->second;
  };
}

// The values an output argument returns: the elements of a tuple or list,
// else the value itself.
ArgumentList returned_values(const Argument& out) {
  if (out.is_sequence()) return out.elements();
  return {out};
}

// Graph order without renumbering the graph after every insertion: nodes are
// keyed by position when an order is first needed (most matches have one
// user to insert before, and need none); nodes inserted later before a keyed
// node X are keyed just below X, in insertion order. Anything else (an
// insertion before a node that was itself inserted) switches to
// Node::is_before.
class OrderKeys {
 public:
  explicit OrderKeys(const Graph& graph) : graph_(graph) {}
  // The first of `nodes` in graph order.
  Node* first(const std::vector<Node*>& nodes) {
    Node* best = nullptr;
    for (Node* n : nodes) {
      if (best == nullptr || before(n, best)) best = n;
    }
    return best;
  }
  Node* last(const std::vector<Node*>& nodes) {
    Node* best = nullptr;
    for (Node* n : nodes) {
      if (best == nullptr || before(best, n)) best = n;
    }
    return best;
  }
  // Records `n`, just inserted before `anchor` (nullptr: at the end).
  void inserted(const Node* n, const Node* anchor) {
    if (!numbered_ || !valid_) return;
    auto it = anchor != nullptr ? keys_.find(anchor) : keys_.end();
    if (it == keys_.end() || it->second.minor != 0) {
      valid_ = false;
      return;
    }
    ++counter_;
    keys_.emplace(n, Key{it->second.major, counter_ - (int64_t{1} << 60)});
  }

 private:
  struct Key {
    int64_t major;
    int64_t minor;
  };
  bool before(const Node* a, const Node* b) {
    if (!numbered_) {
      numbered_ = true;
      keys_.reserve(graph_.size());
      int64_t i = 0;
      for (const Node* n : graph_.nodes()) keys_.emplace(n, Key{++i, 0});
    }
    if (valid_) {
      auto ia = keys_.find(a);
      auto ib = keys_.find(b);
      if (ia != keys_.end() && ib != keys_.end()) {
        const Key& ka = ia->second;
        const Key& kb = ib->second;
        return ka.major != kb.major ? ka.major < kb.major : ka.minor < kb.minor;
      }
    }
    return a->is_before(b);
  }

  const Graph& graph_;
  absl::flat_hash_map<const Node*, Key> keys_;
  int64_t counter_ = 0;
  bool numbered_ = false;
  bool valid_ = true;
};

// The matcher's options for `options` (`owner`: the module owning the
// graph's call_module targets, or nullptr).
MatcherOptions matcher_options(const RewriteOptions& options,
                               const GraphModule* owner) {
  MatcherOptions mo;
  mo.ignore_literals = options.ignore_literals;
  if (options.normalize_arguments) {
    mo.normalized_arguments = cached_normalized_arguments();
  }
  if (options.match_modules_by_type && owner != nullptr) {
    mo.graph_module_type = cached_module_type(
        [owner](const Node& n) { return module_type(*owner, n.target()); });
    const GraphModule* pm = options.pattern_module;
    mo.pattern_module_type = [pm](const Node& n) {
      if (pm != nullptr) {
        std::string type = module_type(*pm, n.target());
        if (!type.empty()) return type;
      }
      return n.target();
    };
  }
  return mo;
}

// Checks the replacement against the pattern before changing anything;
// returns the replacement's placeholders.
std::vector<const Node*> checked_replacement_placeholders(
    const Graph& replacement, const SubgraphMatcher& matcher) {
  std::vector<const Node*> rep_placeholders;
  for (const Node* n : replacement.nodes()) {
    if (n->op() == Opcode::kPlaceholder) rep_placeholders.push_back(n);
  }
  if (rep_placeholders.size() != matcher.pattern_placeholder_nodes().size()) {
    throw FxError(cat("replace_pattern: the replacement has ",
                      rep_placeholders.size(), " placeholders, the pattern ",
                      matcher.pattern_placeholder_nodes().size()));
  }
  const Node* rep_output = replacement.output_node();
  if (rep_output == nullptr || rep_output->args().empty()) {
    throw FxError("replace_pattern: the replacement has no output");
  }
  const size_t n_returned = returned_values(rep_output->args()[0]).size();
  if (n_returned != matcher.pattern_returning_nodes().size()) {
    throw FxError(cat("replace_pattern: the replacement returns ", n_returned,
                      " values, the pattern ",
                      matcher.pattern_returning_nodes().size()));
  }
  for (const Argument& v : returned_values(rep_output->args()[0])) {
    if (!v.is_node()) {
      throw FxError(
          "replace_pattern: the replacement's output must return nodes");
    }
  }
  return rep_placeholders;
}

// Pattern call_module targets -> their pattern nodes (replacement
// call_module / get_attr targets naming a pattern module are retargeted).
using PatternModules = absl::flat_hash_map<std::string, const Node*>;

PatternModules pattern_module_nodes(const Graph& pattern,
                                    const RewriteOptions& options) {
  PatternModules pattern_modules;
  if (options.match_modules_by_type) {
    for (const Node* n : pattern.nodes()) {
      if (n->op() == Opcode::kCallModule) {
        pattern_modules.emplace(n->target(), n);
      }
    }
  }
  return pattern_modules;
}

// The matches of the pattern in `graph` every filter accepts.
std::vector<InternalMatch> filtered_matches(
    const SubgraphMatcher& matcher, const Graph& graph, const Graph& pattern,
    const std::vector<MatchFilter>& match_filters) {
  std::vector<InternalMatch> matches = matcher.match(graph);
  if (!match_filters.empty()) {
    std::vector<InternalMatch> kept;
    for (InternalMatch& m : matches) {
      bool ok = true;
      for (const MatchFilter& f : match_filters) {
        if (!f(m, graph, pattern)) {
          ok = false;
          break;
        }
      }
      if (ok) kept.push_back(std::move(m));
    }
    matches = std::move(kept);
  }
  return matches;
}

// Replaces matches one after the other, in graph order, remembering what
// replaced each returned node for later matches' placeholders.
class MatchReplacer {
 public:
  MatchReplacer(Graph& graph, const Graph& pattern, const Graph& replacement,
                const RewriteOptions& options,
                const std::vector<const Node*>& rep_placeholders,
                const PatternModules& pattern_modules)
      : graph_(graph),
        replacement_(replacement),
        options_(options),
        rep_placeholders_(rep_placeholders),
        pattern_modules_(pattern_modules),
        order_(graph),
        pattern_nodes_(pattern.nodes().to_vector()) {}

  ReplacedPatterns replace(InternalMatch& match) {
    ReplacedPatterns replaced;
    replaced.anchor = match.anchors.empty() ? nullptr : match.anchors[0];
    replaced.matched_anchor = match.node_for(replaced.anchor);
    ValueMap val_map = placeholder_values(match);
    Node* before = insertion_point(match);
    const Argument out = copy_replacement(match, before, val_map, replaced);
    replace_returned_nodes(match, out);
    propagate_shared_meta(replaced);
    erase_matched_nodes(match);
    replaced.nodes_map = std::move(match.nodes_map);
    return replaced;
  }

 private:
  // Replacement node -> its value in the graph.
  using ValueMap = absl::flat_hash_map<const Node*, Argument>;

  // Placeholders: the values they matched, or what replaced those values.
  ValueMap placeholder_values(InternalMatch& match) const {
    ValueMap val_map;
    for (size_t i = 0; i < rep_placeholders_.size(); ++i) {
      Argument& value = match.placeholder_nodes[i];
      if (value.is_node()) {
        auto it = changed_.find(value.as_node());
        if (it != changed_.end()) {
          Node* old = value.as_node();
          for (auto& [pn, v] : match.nodes_map) {
            if (v.is_node() && v.as_node() == old) v = Argument(it->second);
          }
          value = Argument(it->second);
        }
      }
      val_map[rep_placeholders_[i]] = value;
    }
    return val_map;
  }

  // Insert before the first user of the returned nodes (after the match
  // when they have none). nullptr: at the end of the graph.
  Node* insertion_point(const InternalMatch& match) {
    std::vector<Node*> users;
    absl::flat_hash_set<Node*> seen;
    for (Node* rn : match.returning_nodes) {
      for (Node* u : rn->users()) {
        if (seen.insert(u).second) users.push_back(u);
      }
    }
    if (!users.empty()) return order_.first(users);
    std::vector<Node*> matched;
    for (const auto& [pn, v] : match.nodes_map) {
      if (pn->op() != Opcode::kPlaceholder && v.is_node()) {
        matched.push_back(v.as_node());
      }
    }
    Node* last = order_.last(matched);
    return last != nullptr ? last->next() : nullptr;
  }

  // Copies the replacement's nodes before `before`; returns its output
  // argument mapped to the graph.
  Argument copy_replacement(const InternalMatch& match, Node* before,
                            ValueMap& val_map, ReplacedPatterns& replaced) {
    auto lookup = [&](Node* n) -> Argument {
      auto it = val_map.find(n);
      if (it == val_map.end()) {
        throw FxError(cat("replace_pattern: Node '", n->name(),
                          "' is used before it is defined"));
      }
      return it->second;
    };
    Argument out;
    std::optional<Graph::InsertPoint> ip;
    if (before != nullptr) ip.emplace(graph_.inserting_before(before));
    for (const Node* rn : replacement_.nodes()) {
      if (val_map.contains(rn)) continue;
      if (rn->op() == Opcode::kOutput) {
        out = map_arg(rn->args()[0], lookup);
        break;
      }
      Node::Args args;
      for (const Argument& a : rn->args()) args.push_back(map_arg(a, lookup));
      Node::Kwargs kwargs;
      for (const auto& kv : rn->kwargs()) {
        kwargs.emplace_back(kv.first, map_arg(kv.second, lookup));
      }
      std::string_view target = rn->target();
      std::optional<std::string_view> name = rn->name();
      retarget(*rn, match, target, name);
      Node* copy = graph_.create_node(rn->op(), target, std::move(args),
                                      std::move(kwargs), name, rn->type());
      if (!rn->meta().empty()) copy->mutable_meta() = rn->meta();
      order_.inserted(copy, before);
      val_map[rn] = Argument(copy);
      replaced.replacements.push_back(copy);
    }
    return out;
  }

  // The copy keeps the replacement node's name (torch.fx's node_copy)
  // unless it was retargeted: then it is named from what it calls.
  void retarget(const Node& rn, const InternalMatch& match,
                std::string_view& target,
                std::optional<std::string_view>& name) const {
    if (!pattern_modules_.empty() &&
        (rn.op() == Opcode::kCallModule || rn.op() == Opcode::kGetAttr)) {
      auto pm = pattern_modules_.find(rn.target());
      if (pm != pattern_modules_.end()) {
        if (Node* gn = match.node_for(pm->second)) {
          target = gn->target();
          name = std::nullopt;
        }
      }
    }
  }

  // The uses of each returned node go to its replacement.
  void replace_returned_nodes(const InternalMatch& match, const Argument& out) {
    ArgumentList copied = returned_values(out);
    for (size_t i = 0; i < match.returning_nodes.size(); ++i) {
      if (!copied[i].is_node()) {
        throw FxError(
            "replace_pattern: the replacement's output must return nodes");
      }
      Node* gn = match.returning_nodes[i];
      Node* cn = copied[i].as_node();
      if (options_.propagate_meta && cn != gn) {
        for (const auto& [key, value] : gn->meta()) {
          if (cn->meta_value(key) == nullptr) cn->set_meta(key, value);
        }
      }
      gn->replace_all_uses_with(cn);
      changed_[gn] = cn;
    }
  }

  // Where the code came from, onto the other replacement nodes.
  void propagate_shared_meta(const ReplacedPatterns& replaced) const {
    if (!options_.propagate_meta || replaced.matched_anchor == nullptr) return;
    for (Node* copy : replaced.replacements) {
      for (const std::string& key : options_.shared_meta_keys) {
        const Argument* v = replaced.matched_anchor->meta_value(key);
        if (v != nullptr && copy->meta_value(key) == nullptr) {
          copy->set_meta(key, *v);
        }
      }
    }
  }

  // Erases the matched nodes, users first.
  void erase_matched_nodes(const InternalMatch& match) {
    for (auto it = pattern_nodes_.rbegin(); it != pattern_nodes_.rend(); ++it) {
      const Node* pn = *it;
      if (pn->op() == Opcode::kPlaceholder || pn->op() == Opcode::kOutput) {
        continue;
      }
      if (Node* gn = match.node_for(pn)) graph_.erase_node(gn);
    }
  }

  Graph& graph_;
  const Graph& replacement_;
  const RewriteOptions& options_;
  const std::vector<const Node*>& rep_placeholders_;
  const PatternModules& pattern_modules_;
  OrderKeys order_;
  absl::flat_hash_map<Node*, Node*> changed_;  // returned node -> replacement
  std::vector<Node*> pattern_nodes_;
};

}  // namespace

std::vector<ReplacedPatterns> replace_pattern_in_graph(
    Graph& graph, const Graph& pattern, const Graph& replacement,
    const std::vector<MatchFilter>& match_filters,
    const RewriteOptions& options, const GraphModule* owner) {
  SubgraphMatcher matcher(pattern, matcher_options(options, owner));
  const std::vector<const Node*> rep_placeholders =
      checked_replacement_placeholders(replacement, matcher);
  const PatternModules pattern_modules = pattern_module_nodes(pattern, options);
  std::vector<InternalMatch> matches =
      filtered_matches(matcher, graph, pattern, match_filters);

  std::vector<ReplacedPatterns> result;
  result.reserve(matches.size());
  if (matches.empty()) return result;
  MatchReplacer replacer(graph, pattern, replacement, options, rep_placeholders,
                         pattern_modules);
  for (InternalMatch& match : matches) {
    result.push_back(replacer.replace(match));
  }
  return result;
}

std::vector<ReplacedPatterns> replace_pattern_with_filters(
    GraphModule& gm, const Graph& pattern, const Graph& replacement,
    const std::vector<MatchFilter>& match_filters,
    const RewriteOptions& options) {
  std::vector<ReplacedPatterns> result = replace_pattern_in_graph(
      gm.graph(), pattern, replacement, match_filters, options, &gm);
  gm.recompile();
  return result;
}

std::vector<ReplacedPatterns> replace_pattern(GraphModule& gm,
                                              const Graph& pattern,
                                              const Graph& replacement,
                                              const RewriteOptions& options) {
  return replace_pattern_with_filters(gm, pattern, replacement, {}, options);
}

std::vector<ReplacedPatterns> replace_pattern(GraphModule& gm,
                                              const GraphModule& pattern,
                                              const GraphModule& replacement,
                                              RewriteOptions options) {
  return replace_pattern_with_filters(gm, pattern, replacement, {},
                                      std::move(options));
}

std::vector<ReplacedPatterns> replace_pattern_with_filters(
    GraphModule& gm, const GraphModule& pattern, const GraphModule& replacement,
    const std::vector<MatchFilter>& match_filters, RewriteOptions options) {
  options.pattern_module = &pattern;
  std::vector<ReplacedPatterns> result =
      replace_pattern_in_graph(gm.graph(), pattern.graph(), replacement.graph(),
                               match_filters, options, &gm);
  // torch.fx's _replace_submodules: what the replacement calls and gm lacks.
  for (const Node* n : gm.graph().nodes()) {
    if (n->op() != Opcode::kCallModule && n->op() != Opcode::kGetAttr) continue;
    if (gm.resolve_attr(n->target()) != GraphOwner::AttrKind::kMissing) {
      continue;
    }
    if (auto sub = replacement.get_submodule(n->target())) {
      gm.add_submodule(n->target(), sub->clone());
      continue;
    }
    at::Tensor t = replacement.get_attr(n->target());
    if (t.defined()) {
      const bool is_parameter = replacement.resolve_attr(n->target()) ==
                                GraphOwner::AttrKind::kParameter;
      gm.set_attr(n->target(), t.detach().clone(), is_parameter);
      continue;
    }
    throw FxError(cat("Attempted to create a \"", opcode_name(n->op()),
                      "\" node during subgraph rewriting with target ",
                      n->target(),
                      ", but the referenced submodule does not exist in "
                      "either the original GraphModule `gm` or the "
                      "replacement GraphModule `replacement`"));
  }
  gm.graph().lint();
  gm.recompile();
  return result;
}

}  // namespace fx
