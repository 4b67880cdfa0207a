// fx_sdk.symbolic_shape_prop: symbolic shape propagation on an SDK
// GraphModule (fx::symbolic_shape_prop): the placeholders' sizes are the
// symbolic graph's own (make_fx(tracing_mode="symbolic")), or sizes the
// caller names per placeholder (symbols, integers, expressions as text) with
// a hint for each symbol. Writes meta['tensor_meta'] (symbolic sizes) on
// every node and returns the guards taken, as sympy prints them. Errors
// raise ValueError naming the placeholder, the dimension or the node.
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/shape_guards.h"
#include "fx_core/runtime/symbolic/symbolic_meta.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "fx_core/symbolic/shape_env.h"
#include "fx_core/symbolic/sym_parser.h"
#include "python/bindings.h"

namespace py = pybind11;

namespace fx_sdk {
namespace {

// A placeholder's sizes: text ("Bx3x224x224", parse_sizes_text) or a list
// of integers and expressions.
using SizeList = std::vector<std::variant<int64_t, std::string>>;
using SizeSpec = std::variant<std::string, SizeList>;

fx::sym::Expr size_expr(const std::variant<int64_t, std::string>& size,
                        const std::string& placeholder, size_t dim) {
  if (const int64_t* i = std::get_if<int64_t>(&size)) {
    return fx::sym::Expr::integer(*i);
  }
  absl::StatusOr<fx::sym::Expr> e =
      fx::sym::parse_sym_expr(std::get<std::string>(size));
  if (!e.ok()) {
    throw py::value_error(fx::cat("shapes['", placeholder, "'][", dim,
                                  "]: ", std::string(e.status().message())));
  }
  return *std::move(e);
}

std::vector<fx::sym::Expr> size_exprs(const SizeSpec& spec,
                                      const std::string& placeholder) {
  if (const std::string* text = std::get_if<std::string>(&spec)) {
    absl::StatusOr<std::vector<fx::sym::Expr>> sizes =
        fx::parse_sizes_text(*text);
    if (!sizes.ok()) {
      throw py::value_error(fx::cat("shapes['", placeholder, "']: ",
                                    std::string(sizes.status().message())));
    }
    return *std::move(sizes);
  }
  const SizeList& list = std::get<SizeList>(spec);
  std::vector<fx::sym::Expr> exprs;
  for (size_t d = 0; d < list.size(); ++d) {
    exprs.push_back(size_expr(list[d], placeholder, d));
  }
  return exprs;
}

// The environment the caller names, or the graph's own.
fx::sym::ShapeEnv requested_env(const fx::GraphModule& gm,
                                const std::map<std::string, SizeSpec>& shapes,
                                const std::map<std::string, int64_t>& hints) {
  fx::sym::ShapeEnv env;
  if (shapes.empty()) {
    std::shared_ptr<const fx::sym::ShapeEnv> own =
        fx::graph_shape_env(gm.graph(), gm.declared_shape_env().get());
    if (own == nullptr) {
      throw py::value_error(
          "the graph has no symbolic sizes: name them with shapes=");
    }
    env = *own;
  }
  for (const auto& [placeholder, sizes] : shapes) {
    env.add_input(placeholder, size_exprs(sizes, placeholder));
  }
  for (const auto& [symbol, value] : hints) {
    try {
      fx::set_symbol_hint(env, symbol, value);
    } catch (const fx::FxError& e) {
      throw py::value_error(fx::cat("hints['", symbol, "']: ", e.what()));
    }
  }
  fx::assign_default_hints(env);
  return env;
}

std::vector<std::string> symbolic_shape_prop(
    fx::GraphModule& gm, const std::map<std::string, SizeSpec>& shapes,
    const std::map<std::string, int64_t>& hints) {
  fx::sym::ShapeEnv env = requested_env(gm, shapes, hints);
  std::vector<fx::sym::Relation> guards;
  try {
    guards = fx::symbolic_shape_prop(gm, env);
  } catch (const fx::FxError& e) {
    throw py::value_error(e.what());
  }
  std::vector<std::string> out;
  for (const fx::sym::Relation& g : guards) out.push_back(g.str());
  return out;
}

}  // namespace

void bind_symbolic_shape_prop(py::module_& m) {
  m.def("_symbolic_shape_prop", &symbolic_shape_prop, py::arg("gm"),
        py::arg("shapes"), py::arg("hints"));
}

}  // namespace fx_sdk
