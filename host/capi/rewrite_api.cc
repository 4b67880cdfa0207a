// The FxApi entries for subgraph rewriting (torch.fx's SubgraphMatcher and
// replace_pattern over fx_core/rewrite).
#include <torch/nn/module.h>

#include <memory>
#include <vector>

#include "fx_core/rewrite/subgraph_matcher.h"
#include "fx_core/rewrite/subgraph_rewriter.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "host/capi/api_internal.h"
#include "host/handles/wrap.h"

namespace fx::host::internal {
namespace {

const GraphModule* module_of(const Graph& g) {
  return dynamic_cast<const GraphModule*>(g.owning_module());
}

std::string module_type(const GraphModule* gm, const Node& n) {
  if (gm == nullptr) return "";
  std::shared_ptr<torch::nn::Module> m = gm->get_submodule(n.target());
  if (m == nullptr) return "";
  return module_type_name(*m);
}

MatcherOptions matcher_options(const Graph& graph, const Graph& pattern,
                               uint32_t flags) {
  MatcherOptions o;
  o.ignore_literals = (flags & FX_REWRITE_IGNORE_LITERALS) != 0;
  if (flags & FX_REWRITE_MATCH_MODULES_BY_TYPE) {
    const GraphModule* owner = module_of(graph);
    const GraphModule* pattern_owner = module_of(pattern);
    o.graph_module_type = [owner](const Node& n) {
      return module_type(owner, n);
    };
    o.pattern_module_type = [pattern_owner](const Node& n) {
      std::string t = module_type(pattern_owner, n);
      return t.empty() ? n.target() : t;
    };
  }
  return o;
}

Node* anchor_of(const std::vector<const Node*>& anchors,
                const std::vector<std::pair<const Node*, Argument>>& map) {
  if (anchors.empty()) return nullptr;
  for (const auto& [pattern_node, value] : map) {
    if (pattern_node == anchors.front() && value.is_node()) {
      return value.as_node();
    }
  }
  return nullptr;
}

RewriteOptions rewrite_options(const Graph& pattern, uint32_t flags) {
  RewriteOptions options;
  options.ignore_literals = (flags & FX_REWRITE_IGNORE_LITERALS) != 0;
  options.match_modules_by_type =
      (flags & FX_REWRITE_MATCH_MODULES_BY_TYPE) != 0;
  options.propagate_meta = (flags & FX_REWRITE_NO_META) == 0;
  options.pattern_module = module_of(pattern);
  return options;
}

// The plugin's filter as a MatchFilter (none when it is NULL).
std::vector<MatchFilter> match_filters(FxMatchFilterFn filter,
                                       void* filter_data) {
  std::vector<MatchFilter> filters;
  if (filter != nullptr) {
    filters.push_back([filter, filter_data](const InternalMatch& m,
                                            const Graph&, const Graph&) {
      std::vector<Node*> none;
      FxMatch match{&m.nodes_map, anchor_of(m.anchors, m.nodes_map), &none};
      ScopedMatch lent(match);
      return filter(lent.handle(), filter_data) != 0;
    });
  }
  return filters;
}

FxStatus* match_pattern(const FxGraph* g, const FxGraph* p, uint32_t flags,
                        FxMatchFn on_match, void* user_data) {
  FxStatus* from_callback = nullptr;
  FxStatus* status = guarded("GraphMatchPattern", [&] {
    const Graph& graph = *live_graph(g);
    const Graph& pattern = *require(unwrap(p), "pattern");
    require(on_match, "on_match");
    SubgraphMatcher matcher(pattern, matcher_options(graph, pattern, flags));
    std::vector<Node*> none;
    for (const InternalMatch& m : matcher.match(graph)) {
      FxMatch match{&m.nodes_map, anchor_of(m.anchors, m.nodes_map), &none};
      ScopedMatch lent(match);
      from_callback = on_match(lent.handle(), user_data);
      if (from_callback != nullptr) return;
    }
  });
  return from_callback != nullptr ? from_callback : status;
}

FxStatus* replace_pattern(FxGraph* g, const FxGraph* p, const FxGraph* r,
                          uint32_t flags, FxMatchFilterFn filter,
                          void* filter_data, FxMatchFn on_replaced,
                          void* replaced_data, size_t* num_replacements) {
  FxStatus* from_callback = nullptr;
  FxStatus* status = guarded("GraphReplacePattern", [&] {
    Graph& graph = *live_graph(g);
    const Graph& pattern = *require(unwrap(p), "pattern");
    const Graph& replacement = *require(unwrap(r), "replacement");
    std::vector<ReplacedPatterns> done = replace_pattern_in_graph(
        graph, pattern, replacement, match_filters(filter, filter_data),
        rewrite_options(pattern, flags), module_of(graph));
    if (num_replacements) *num_replacements = done.size();
    if (on_replaced == nullptr) return;
    for (const ReplacedPatterns& r : done) {
      FxMatch match{&r.nodes_map, r.matched_anchor, &r.replacements};
      ScopedMatch lent(match);
      from_callback = on_replaced(lent.handle(), replaced_data);
      if (from_callback != nullptr) return;
    }
  });
  return from_callback != nullptr ? from_callback : status;
}

// MatchSize .. MatchReplacement.
void fill_match_entries(FxApi& t) {
  t.MatchSize = [](const FxMatch* h) -> size_t {
    const FxMatch* m = peek(h);
    return m ? m->nodes_map->size() : 0;
  };
  t.MatchPatternNode = [](const FxMatch* h, size_t i) -> const FxNode* {
    const FxMatch* m = peek(h);
    if (m == nullptr || i >= m->nodes_map->size()) return nullptr;
    return wrap((*m->nodes_map)[i].first);
  };
  t.MatchValue = [](const FxMatch* h, size_t i) { return borrow(h, i); };
  t.MatchAnchor = [](const FxMatch* h) -> FxNode* {
    const FxMatch* m = peek(h);
    return m ? wrap(m->anchor) : nullptr;
  };
  t.MatchNumReplacements = [](const FxMatch* h) -> size_t {
    const FxMatch* m = peek(h);
    return m ? m->replacements->size() : 0;
  };
  t.MatchReplacement = [](const FxMatch* h, size_t i) -> FxNode* {
    const FxMatch* m = peek(h);
    if (m == nullptr || i >= m->replacements->size()) return nullptr;
    return wrap((*m->replacements)[i]);
  };
}

}  // namespace

void fill_rewrite_entries(FxApi& t) {
  t.CreateGraph = [](FxGraph** out) {
    return guarded("CreateGraph", [&] {
      FxGraph** slot = require(out, "out");
      auto graph = std::make_unique<Graph>();
      note_created_graph(graph.get());
      *slot = wrap(graph.release());
    });
  };
  // Kept until free_released_graphs(), so later uses are refused.
  t.ReleaseGraph = [](FxGraph* g) {
    const Graph* graph = peek(g);  // a stale handle: nothing to release
    if (graph != nullptr) release_graph(const_cast<Graph*>(graph));
  };
  t.GraphMatchPattern = match_pattern;
  t.GraphReplacePattern = replace_pattern;
  fill_match_entries(t);
}

}  // namespace fx::host::internal
