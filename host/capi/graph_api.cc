// The graph entries of the C function table: queries (GraphNumNodes ..
// GraphFindNodes) and edits (GraphCreateNode .. GraphPythonCode).
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <new>
#include <vector>

#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "host/capi/api_internal.h"
#include "host/capi/c_api.h"
#include "host/handles/wrap.h"

namespace fx::host {
namespace internal {

namespace {

// ------------------------------------------------------------------ graphs

FxStatus* find_nodes(const FxGraph* g, FxOpcode op, const char* target,
                     FxNode** out, size_t capacity, size_t* count) {
  return guarded("GraphFindNodes", [&] {
    std::vector<Node*> found =
        require(unwrap(g), "graph")
            ->find_nodes(to_opcode(op), require(target, "target"));
    *require(count, "count") = found.size();
    if (out == nullptr) return;
    if (capacity < found.size()) {
      fail(FX_INVALID_ARGUMENT, cat("capacity ", capacity, " is less than the ",
                                    found.size(), " nodes found"));
    }
    for (size_t i = 0; i < found.size(); ++i) out[i] = wrap(found[i]);
  });
}

}  // namespace

// GraphNumNodes .. GraphFindNodes.
void fill_graph_query_entries(FxApi& t) {
  t.GraphNumNodes = [](const FxGraph* h) -> size_t {
    const Graph* g = peek(h);
    return g ? g->size() : 0;
  };
  t.GraphFirstNode = [](const FxGraph* h) -> FxNode* {
    const Graph* g = peek(h);
    return g ? wrap(g->first()) : nullptr;
  };
  t.GraphLastNode = [](const FxGraph* h) -> FxNode* {
    const Graph* g = peek(h);
    return g ? wrap(g->last()) : nullptr;
  };
  t.GraphOutputNode = [](const FxGraph* h) -> FxNode* {
    const Graph* g = peek(h);
    return g ? wrap(g->output_node()) : nullptr;
  };
  t.GraphFindNodes = find_nodes;
}

namespace {

FxStatus* create_node(FxGraph* g, FxOpcode op, const char* target,
                      const FxArg* const* args, size_t num_args,
                      const char* const* kwarg_keys,
                      const FxArg* const* kwarg_values, size_t num_kwargs,
                      const char* name, const char* type, FxNode** out) {
  return guarded("GraphCreateNode", [&] {
    require(out, "out");
    std::string_view tgt = require(target, "target");
    if (tgt.empty()) fail(FX_INVALID_ARGUMENT, "target must not be empty");
    Node* node = live_graph(g)->create_node(
        to_opcode(op), tgt, make_args(args, num_args),
        make_kwargs(kwarg_keys, kwarg_values, num_kwargs),
        name ? std::optional<std::string_view>(name) : std::nullopt,
        type ? type : "");
    *out = wrap(node);
  });
}

}  // namespace

// GraphCreateNode .. GraphPythonCode.
void fill_graph_edit_entries(FxApi& t) {
  t.GraphCreateNode = create_node;
  t.GraphSetInsertPoint = [](FxGraph* g, FxNode* anchor, int after) {
    return guarded("GraphSetInsertPoint", [&] {
      live_graph(g)->set_insert_point(
          anchor ? live_node(anchor, "anchor") : nullptr, after != 0);
    });
  };
  t.GraphGetInsertPoint = [](const FxGraph* h, FxNode** anchor, int* after) {
    const Graph* g = peek(h);
    if (g == nullptr) return;
    auto [node, is_after] = g->insert_point();
    if (anchor) *anchor = wrap(node);
    if (after) *after = is_after ? 1 : 0;
  };
  t.GraphEraseNode = [](FxGraph* g, FxNode* n) {
    return guarded("GraphEraseNode",
                   [&] { live_graph(g)->erase_node(live_node(n, "node")); });
  };
  t.GraphEliminateDeadCode = [](FxGraph* g, int* changed) {
    return guarded("GraphEliminateDeadCode", [&] {
      bool c = live_graph(g)->eliminate_dead_code();
      if (changed) *changed = c ? 1 : 0;
    });
  };
  t.GraphLint = [](const FxGraph* g) {
    return guarded("GraphLint", [&] { live_graph(g)->lint(); });
  };
  t.GraphToText = [](const FxGraph* g, char** out) {
    return guarded("GraphToText", [&] {
      *require(out, "out") = c_string(live_graph(g)->str());
    });
  };
  t.GraphPythonCode = [](const FxGraph* g, char** out) {
    return guarded("GraphPythonCode", [&] {
      *require(out, "out") = c_string(live_graph(g)->python_code("self").src);
    });
  };
}

}  // namespace internal

}  // namespace fx::host
