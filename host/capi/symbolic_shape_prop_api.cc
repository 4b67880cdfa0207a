// The FxApi entry GraphSymbolicShapeProp (version 8): the host's symbolic
// shape propagation (fx_core/runtime/symbolic/symbolic_meta.h) on a
// plugin's graph, with the sizes and hints it names as text.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/shape_guards.h"
#include "fx_core/runtime/symbolic/symbolic_meta.h"
#include "fx_core/symbolic/shape_env.h"
#include "host/capi/api_internal.h"
#include "host/handles/wrap.h"

namespace fx::host::internal {
namespace {

std::vector<std::string> placeholder_names(const Graph& g) {
  std::vector<std::string> names;
  for (const Node* n : g.nodes()) {
    if (n->op() == Opcode::kPlaceholder) names.emplace_back(n->name());
  }
  return names;
}

// The sizes `shapes` names, one per placeholder (NULL or "": none).
sym::ShapeEnv named_shapes(const Graph& g, const char* const* shapes,
                           size_t num_shapes) {
  std::vector<std::string> names = placeholder_names(g);
  if (num_shapes != names.size()) {
    fail(FX_INVALID_ARGUMENT,
         cat("shapes gives ", num_shapes, " inputs, the graph has ",
             names.size(), " placeholders"));
  }
  require(shapes, "shapes");
  sym::ShapeEnv env;
  for (size_t i = 0; i < num_shapes; ++i) {
    if (shapes[i] == nullptr || shapes[i][0] == '\0') continue;
    absl::StatusOr<std::vector<sym::Expr>> sizes = parse_sizes_text(shapes[i]);
    if (!sizes.ok()) {
      fail(FX_INVALID_ARGUMENT,
           cat("placeholder '", names[i], "' (\"", shapes[i],
               "\"): ", std::string(sizes.status().message())));
    }
    env.add_input(names[i], *std::move(sizes));
  }
  return env;
}

// "NAME=VALUE" into env's hints.
void add_hints(sym::ShapeEnv& env, const char* const* hints, size_t n) {
  if (n > 0) require(hints, "hints");
  for (size_t i = 0; i < n; ++i) {
    std::string_view text = require(hints[i], "hint");
    size_t eq = text.find('=');
    int64_t value = 0;
    bool ok = eq != std::string_view::npos && eq > 0 && eq + 1 < text.size();
    for (size_t k = eq + 1; ok && k < text.size(); ++k) {
      ok = text[k] >= '0' && text[k] <= '9' && value < (int64_t{1} << 40);
      if (ok) value = value * 10 + (text[k] - '0');
    }
    if (!ok) {
      fail(FX_INVALID_ARGUMENT, cat("hint \"", text, "\" is not NAME=VALUE"));
    }
    try {
      set_symbol_hint(env, text.substr(0, eq), value);
    } catch (const FxError& e) {
      fail(FX_INVALID_ARGUMENT, e.what());
    }
  }
}

Argument guard_list(const std::vector<sym::Relation>& guards) {
  ArgumentList items;
  for (const sym::Relation& g : guards) items.emplace_back(g.str());
  return Argument::list(std::move(items));
}

}  // namespace

void fill_symbolic_shape_prop_entry(FxApi& t) {
  t.GraphSymbolicShapeProp = [](FxGraph* graph, const char* const* shapes,
                                size_t num_shapes, const char* const* hints,
                                size_t num_hints, FxArg** guards) {
    return guarded("GraphSymbolicShapeProp", [&] {
      GraphModule& gm = owning_module(unwrap(graph));
      sym::ShapeEnv env;
      if (num_shapes == 0) {
        auto own = graph_shape_env(gm.graph(), gm.declared_shape_env().get());
        if (own == nullptr) {
          fail(FX_INVALID_ARGUMENT,
               "the graph has no symbolic sizes: name them with shapes");
        }
        env = *own;
      } else {
        env = named_shapes(gm.graph(), shapes, num_shapes);
      }
      add_hints(env, hints, num_hints);
      assign_default_hints(env);
      std::vector<sym::Relation> taken = symbolic_shape_prop(gm, env);
      if (guards != nullptr) *guards = give(guard_list(taken));
    });
  };
}

}  // namespace fx::host::internal
