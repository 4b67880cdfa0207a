// The FxApi entries of version 8, symbolic shapes: ArgIsSymInt and
// CreateSymInt, and a graph's shape environment (fx_core/runtime's
// graph_shape_env over the placeholders' tensor_meta and the owning
// GraphModule's declared hints and guards) as an FxShapeEnv snapshot.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/shape_guards.h"
#include "fx_core/symbolic/shape_env.h"
#include "fx_core/symbolic/sym_parser.h"
#include "host/capi/api_internal.h"
#include "host/handles/wrap.h"

namespace fx::host::internal {

// What an FxShapeEnv names (a checked handle, wrap.h): a graph's shape
// environment when it was read, with the texts the entries hand out
// (borrowed from it).
template <>
struct HostObject<FxShapeEnv> : HandleSlot {
  std::shared_ptr<const sym::ShapeEnv> env;
  std::vector<std::string> placeholders;  // the graph's, in order
  std::vector<std::string> symbols;
  std::vector<std::string> relations;  // each guard's relation, sympy's text
};
using ShapeEnvObject = HostObject<FxShapeEnv>;

namespace {

// The declared hints and guards of the GraphModule owning `g`, if any.
const sym::ShapeEnv* declared_env(const Graph& g) {
  auto* gm = dynamic_cast<const GraphModule*>(g.owning_module());
  return gm == nullptr ? nullptr : gm->declared_shape_env().get();
}

std::unique_ptr<ShapeEnvObject> snapshot(const Graph& g) {
  std::shared_ptr<const sym::ShapeEnv> env =
      graph_shape_env(g, declared_env(g));
  if (env == nullptr) return nullptr;
  auto out = std::make_unique<ShapeEnvObject>();
  for (const Node* n : g.nodes()) {
    if (n->op() == Opcode::kPlaceholder) {
      out->placeholders.emplace_back(n->name());
    }
  }
  out->symbols = env->symbols();
  for (const sym::Relation& guard : env->guards()) {
    out->relations.push_back(guard.str());
  }
  out->env = std::move(env);
  return out;
}

const ShapeEnvObject& live_env(const FxShapeEnv* env) {
  return *require(unwrap_object(env), "env");
}

const std::string& symbol_at(const FxShapeEnv* env, size_t index) {
  const ShapeEnvObject& e = live_env(env);
  if (index >= e.symbols.size()) {
    fail(FX_INVALID_ARGUMENT, cat("symbol index ", index, " is out of range (",
                                  e.symbols.size(), " symbols)"));
  }
  return e.symbols[index];
}

// A DLTensor's sizes and strides (row-major when it has none).
sym::TensorShape dl_shape(const DLTensor& t, size_t index) {
  if (t.ndim < 0 || (t.ndim > 0 && t.shape == nullptr)) {
    fail(FX_INVALID_ARGUMENT, cat("input ", index, " has no shape"));
  }
  sym::TensorShape shape;
  shape.sizes.assign(t.shape, t.shape + t.ndim);
  if (t.strides != nullptr) {
    shape.strides.assign(t.strides, t.strides + t.ndim);
    return shape;
  }
  shape.strides.resize(t.ndim);
  int64_t step = 1;
  for (int32_t d = t.ndim - 1; d >= 0; --d) {
    shape.strides[d] = step;
    step *= shape.sizes[d];
  }
  return shape;
}

void check_inputs(const ShapeEnvObject& e, const DLTensor* const* inputs,
                  size_t num_inputs) {
  if (num_inputs != e.placeholders.size()) {
    fail(FX_INVALID_ARGUMENT,
         cat(num_inputs, " inputs for ", e.placeholders.size(),
             " placeholders (one per placeholder, NULL for one that is not "
             "a tensor)"));
  }
  if (num_inputs > 0) require(inputs, "inputs");
  auto shape_of =
      [&](const std::string& placeholder) -> std::optional<sym::TensorShape> {
    for (size_t i = 0; i < num_inputs; ++i) {
      if (e.placeholders[i] != placeholder) continue;
      if (inputs[i] == nullptr) return std::nullopt;
      return dl_shape(*inputs[i], i);
    }
    return std::nullopt;
  };
  absl::StatusOr<sym::Bindings> bound = e.env->bind(shape_of);
  if (!bound.ok()) {
    fail(FX_INVALID_ARGUMENT, std::string(bound.status().message()));
  }
}

void fill_symint_entries(FxApi& t) {
  t.ArgIsSymInt = [](const FxArg* a) -> int {
    const Argument* arg = peek(a);
    return arg != nullptr && arg->is_symint() ? 1 : 0;
  };
  t.CreateSymInt = [](const char* expression, FxArg** out) {
    return guarded("CreateSymInt", [&] {
      FxArg** slot = require(out, "out");
      absl::StatusOr<sym::Expr> expr =
          sym::parse_sym_expr(require(expression, "expression"));
      if (!expr.ok()) {
        fail(FX_INVALID_ARGUMENT,
             cat("\"", expression, "\" is not a symbolic int: ",
                 std::string(expr.status().message())));
      }
      *slot = give(Argument::symint(expr->str()));
    });
  };
}

void fill_symbol_entries(FxApi& t) {
  t.ShapeEnvNumSymbols = [](const FxShapeEnv* handle) -> size_t {
    const ShapeEnvObject* env = peek_object(handle);
    return env ? env->symbols.size() : 0;
  };
  t.ShapeEnvSymbolName = [](const FxShapeEnv* handle,
                            size_t index) -> const char* {
    const ShapeEnvObject* env = peek_object(handle);
    if (env == nullptr || index >= env->symbols.size()) return nullptr;
    return env->symbols[index].c_str();
  };
  t.ShapeEnvSymbolHint = [](const FxShapeEnv* env, size_t index, int64_t* out) {
    return guarded("ShapeEnvSymbolHint", [&] {
      const std::string& name = symbol_at(env, index);
      std::optional<int64_t> hint = live_env(env).env->hint(name);
      if (!hint) fail(FX_NOT_FOUND, cat("no hint was recorded for ", name));
      *require(out, "out") = *hint;
    });
  };
  t.ShapeEnvSymbolSource = [](const FxShapeEnv* env, size_t index,
                              const char** placeholder, size_t* dim,
                              int* is_stride) {
    return guarded("ShapeEnvSymbolSource", [&] {
      const std::string& name = symbol_at(env, index);
      const ShapeEnvObject& e = live_env(env);
      std::optional<sym::DimSource> at = e.env->source(name);
      if (!at) {
        fail(FX_NOT_FOUND, cat("no placeholder size or stride is ", name));
      }
      for (const std::string& p : e.placeholders) {
        if (p == at->placeholder && placeholder) *placeholder = p.c_str();
      }
      if (dim) *dim = at->dim;
      if (is_stride) *is_stride = at->stride ? 1 : 0;
    });
  };
}

void fill_guard_entries(FxApi& t) {
  t.ShapeEnvNumGuards = [](const FxShapeEnv* handle) -> size_t {
    const ShapeEnvObject* env = peek_object(handle);
    return env ? env->relations.size() : 0;
  };
  t.ShapeEnvGuard = [](const FxShapeEnv* handle, size_t index) -> const char* {
    const ShapeEnvObject* env = peek_object(handle);
    if (env == nullptr || index >= env->relations.size()) return nullptr;
    return env->env->guard_text(index).c_str();
  };
  t.ShapeEnvGuardRelation = [](const FxShapeEnv* handle,
                               size_t index) -> const char* {
    const ShapeEnvObject* env = peek_object(handle);
    if (env == nullptr || index >= env->relations.size()) return nullptr;
    return env->relations[index].c_str();
  };
  t.ShapeEnvCheck = [](const FxShapeEnv* env, const DLTensor* const* inputs,
                       size_t num_inputs) {
    return guarded("ShapeEnvCheck",
                   [&] { check_inputs(live_env(env), inputs, num_inputs); });
  };
}

}  // namespace

void fill_shape_env_entries(FxApi& t) {
  fill_symint_entries(t);
  t.GraphShapeEnv = [](const FxGraph* graph, FxShapeEnv** out) {
    return guarded("GraphShapeEnv", [&] {
      FxShapeEnv** slot = require(out, "out");
      std::unique_ptr<ShapeEnvObject> env = snapshot(*live_graph(graph));
      *slot = env ? give_object<FxShapeEnv>(std::move(env)) : nullptr;
    });
  };
  t.ReleaseShapeEnv = [](FxShapeEnv* env) { release_object(env); };
  fill_symbol_entries(t);
  fill_guard_entries(t);
}

}  // namespace fx::host::internal
