// The inline bodies of the wrapper's pattern matching and rewriting:
// OwnedGraph (a pattern or replacement), Match, match_pattern and
// replace_pattern.
//
// Part of the wrapper declared (and documented) in fx/plugin_api.hpp,
// which includes it through fx/plugin_api_inline.hpp. Include
// fx/plugin_api.hpp, not this file. Every definition here is inline (or a
// template), so the wrapper stays header-only.
#ifndef FX_PLUGIN_API_REWRITE_INLINE_HPP_
#define FX_PLUGIN_API_REWRITE_INLINE_HPP_

// Makes this header self-contained for tools that parse it alone; when
// plugin_api.hpp is the includer its guard makes this a no-op.
#include "fx/plugin_api.hpp"

namespace fxp {

// ------------------------------------------------------ patterns, rewriting

inline OwnedGraph::OwnedGraph() {
  FxGraph* g = nullptr;
  check(api()->CreateGraph(&g));
  graph_ = g;
}

inline OwnedGraph::~OwnedGraph() {
  if (graph_) api()->ReleaseGraph(graph_);
}

inline Value OwnedGraph::placeholder(const char* name) {
  return view().create_node(FX_OP_PLACEHOLDER, name);
}

inline void OwnedGraph::output(const Arg& value) {
  view().create_node(FX_OP_OUTPUT, "output", {value});
}

inline size_t Match::size() const { return api()->MatchSize(m_); }

inline Node Match::pattern_node(size_t i) const {
  return Node(const_cast<FxNode*>(api()->MatchPatternNode(m_, i)));
}

inline ArgView Match::value(size_t i) const {
  return ArgView(api()->MatchValue(m_, i));
}

inline Node Match::node_for(Node pattern_node) const {
  for (size_t i = 0; i < size(); ++i) {
    if (this->pattern_node(i) == pattern_node && value(i).is_node()) {
      return value(i).node();
    }
  }
  return Node();
}

inline Node Match::anchor() const { return Node(api()->MatchAnchor(m_)); }

inline std::vector<Node> Match::replacements() const {
  std::vector<Node> out;
  for (size_t i = 0, n = api()->MatchNumReplacements(m_); i < n; ++i) {
    out.emplace_back(api()->MatchReplacement(m_, i));
  }
  return out;
}

namespace detail {
template <typename Fn>
struct MatchCallback {
  Fn* fn;
  std::string error;
  static FxStatus* call(const FxMatch* m, void* self) {
    auto* cb = static_cast<MatchCallback*>(self);
    try {
      (*cb->fn)(Match(m));
      return nullptr;
    } catch (const std::exception& e) {
      return api()->CreateStatus(FX_INTERNAL, e.what());
    }
  }
};
template <typename Fn>
struct FilterCallback {
  Fn* fn;
  static int call(const FxMatch* m, void* self) {
    try {
      return (*static_cast<FilterCallback*>(self)->fn)(Match(m)) ? 1 : 0;
    } catch (...) {
      return 0;
    }
  }
};
}  // namespace detail

template <typename Fn>
void match_pattern(const Graph& graph, const OwnedGraph& pattern, Fn on_match,
                   uint32_t flags) {
  detail::MatchCallback<Fn> cb{&on_match, {}};
  check(api()->GraphMatchPattern(graph.get(), pattern.get(), flags,
                                 &detail::MatchCallback<Fn>::call, &cb));
}

inline size_t replace_pattern(Graph& graph, const OwnedGraph& pattern,
                              const OwnedGraph& replacement, uint32_t flags) {
  size_t count = 0;
  check(api()->GraphReplacePattern(graph.get(), pattern.get(),
                                   replacement.get(), flags, nullptr, nullptr,
                                   nullptr, nullptr, &count));
  return count;
}

template <typename Filter>
size_t replace_pattern_with_filters(Graph& graph, const OwnedGraph& pattern,
                                    const OwnedGraph& replacement, Filter keep,
                                    uint32_t flags) {
  detail::FilterCallback<Filter> cb{&keep};
  size_t count = 0;
  check(api()->GraphReplacePattern(
      graph.get(), pattern.get(), replacement.get(), flags,
      &detail::FilterCallback<Filter>::call, &cb, nullptr, nullptr, &count));
  return count;
}

}  // namespace fxp

#endif  // FX_PLUGIN_API_REWRITE_INLINE_HPP_
