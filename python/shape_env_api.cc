// fx_sdk._C.ShapeEnv and GraphModule.shape_env: a symbolic graph's shape
// environment (torch 1.13's make_fx(tracing_mode="symbolic")) as torch's
// own gm.shape_env shows it: the guards as torch printed them,
// format_guards() byte for byte, the hints (var_to_val), and a check of
// inputs that raises RuntimeError naming the guard, the placeholder and the
// dimension (what calling the GraphModule on them would raise).
//
// gm.shape_env is a snapshot: the sizes the placeholders' tensor_meta
// declare now, with the hints and guards gm holds (fx::graph_shape_env);
// None when the graph is not symbolic.
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/shape_guards.h"
#include "fx_core/symbolic/shape_env.h"
#include "python/bindings.h"
#include "python/python_values.h"

namespace py = pybind11;

namespace fx_sdk {
namespace {

struct ShapeEnvView {
  std::shared_ptr<const fx::sym::ShapeEnv> env;
  std::vector<std::string> placeholders;  // the graph's, in order
};

py::object shape_env_of(const fx::GraphModule& gm) {
  std::shared_ptr<const fx::sym::ShapeEnv> env =
      fx::graph_shape_env(gm.graph(), gm.declared_shape_env().get());
  if (env == nullptr) return py::none();
  ShapeEnvView view{std::move(env), {}};
  for (const fx::Node* n : gm.graph().nodes()) {
    if (n->op() == fx::Opcode::kPlaceholder) {
      view.placeholders.emplace_back(n->name());
    }
  }
  return py::cast(std::move(view));
}

py::list guard_texts(const ShapeEnvView& v) {
  py::list out;
  for (size_t i = 0; i < v.env->guards().size(); ++i) {
    out.append(v.env->guard_text(i));
  }
  return out;
}

py::list relations(const ShapeEnvView& v) {
  py::list out;
  for (const fx::sym::Relation& r : v.env->guards()) out.append(r.str());
  return out;
}

py::dict hints(const ShapeEnvView& v) {
  py::dict out;
  for (const auto& [name, value] : v.env->hints()) out[py::str(name)] = value;
  return out;
}

py::dict sources(const ShapeEnvView& v) {
  py::dict out;
  for (const std::string& name : v.env->symbols()) {
    if (std::optional<fx::sym::DimSource> at = v.env->source(name)) {
      out[py::str(name)] = py::make_tuple(at->placeholder, at->dim, at->stride);
    }
  }
  return out;
}

void check(const ShapeEnvView& v, const py::args& args) {
  std::vector<std::string_view> names(v.placeholders.begin(),
                                      v.placeholders.end());
  fx::check_shape_guards(*v.env, names, to_ivalues(args));
}

}  // namespace

void bind_shape_env(py::module_& m, GraphModuleClass& graph_module) {
  py::class_<ShapeEnvView>(m, "ShapeEnv",
                           "A symbolic graph's shape environment (torch "
                           "1.13's gm.shape_env): GraphModule.shape_env.")
      .def_property_readonly("guards", &guard_texts,
                             "Each guard as torch's format_guards() prints it.")
      .def_property_readonly(
          "relations", &relations,
          "Each guard's relation, what must hold (sympy's text).")
      .def_property_readonly("hints", &hints,
                             "{symbol: its value at capture} (var_to_val).")
      .def_property_readonly(
          "symbols", [](const ShapeEnvView& v) { return v.env->symbols(); },
          "The symbols, in the order the placeholders' sizes name them.")
      .def_property_readonly(
          "sources", &sources,
          "{symbol: (placeholder, dimension, is_stride)} it is read from.")
      .def(
          "format_guards",
          [](const ShapeEnvView& v) { return v.env->format_guards(); },
          "torch 1.13's ShapeEnv.format_guards(): ' - GUARD' lines.")
      .def("check", &check,
           "Checks inputs (one per placeholder) against the sizes and "
           "guards; raises RuntimeError naming the guard, the placeholder "
           "and the dimension.")
      .def("__repr__", [](const ShapeEnvView& v) {
        return "<fx_sdk.ShapeEnv " + std::to_string(v.env->symbols().size()) +
               " symbols, " + std::to_string(v.env->guards().size()) +
               " guards>";
      });
  graph_module.def_property_readonly(
      "shape_env", &shape_env_of,
      "The graph's shape environment (a ShapeEnv snapshot), or None when "
      "the graph is not symbolic.");
}

}  // namespace fx_sdk
