// What fx plugin-check compares: module states and module outputs.
#include "host/plugin_check/module_comparison.h"

#include <ATen/ATen.h>

#include <charconv>
#include <exception>
#include <utility>
#include <vector>

#include "fx_core/format/graph_json.h"
#include "fx_core/support/strings.h"

namespace fx::host::plugin_check_internal {

absl::StatusOr<State> state_of(const GraphModule& module) {
  absl::StatusOr<GraphBundle> bundle =
      describe_graph_module(module, "model.weights.pt");
  if (!bundle.ok()) return bundle.status();
  State state{std::move(bundle->json), {}};
  for (const auto& [key, tensor] : bundle->weights) {
    state.weights.emplace_back(key, tensor.detach().clone());
  }
  return state;
}

// Empty when equal; else what differs.
std::string state_difference(const State& a, const State& b) {
  if (a.json != b.json) return "the fx-graph JSON differs";
  if (a.weights.size() != b.weights.size()) return "the weights differ";
  for (size_t i = 0; i < a.weights.size(); ++i) {
    if (a.weights[i].first != b.weights[i].first ||
        !at::equal(a.weights[i].second, b.weights[i].second)) {
      return cat("weight '", a.weights[i].first, "' differs");
    }
  }
  return "";
}

// `value` in its shortest round-trip form ("0.0001", "1e-06", "nan"):
// fx::cat takes no floating-point numbers.
std::string number_text(double value) {
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof(buf), value);
  return std::string(buf, res.ptr);
}

// Empty when `got` matches `want` within the tolerances; else where not.
std::string value_difference(const c10::IValue& want, const c10::IValue& got,
                             const FxTolerance& tolerance,
                             const std::string& where) {
  if (want.isTensor() && got.isTensor()) {
    const at::Tensor& w = want.toTensor();
    const at::Tensor& g = got.toTensor();
    if (w.sizes() != g.sizes() || w.scalar_type() != g.scalar_type()) {
      return cat(where, ": expected ", c10::str(w.sizes()), " ",
                 c10::toString(w.scalar_type()), ", got ", c10::str(g.sizes()),
                 " ", c10::toString(g.scalar_type()));
    }
    bool close = w.is_floating_point() || w.is_complex()
                     ? at::allclose(g, w, tolerance.rtol, tolerance.atol, true)
                     : at::equal(g, w);
    return close ? "" : cat(where, ": values differ beyond the tolerance");
  }
  bool want_seq = want.isList() || want.isTuple();
  if (want_seq && (got.isList() || got.isTuple())) {
    std::vector<c10::IValue> w =
        want.isList()
            ? want.toListRef().vec()
            : std::vector<c10::IValue>(want.toTupleRef().elements().begin(),
                                       want.toTupleRef().elements().end());
    std::vector<c10::IValue> g =
        got.isList()
            ? got.toListRef().vec()
            : std::vector<c10::IValue>(got.toTupleRef().elements().begin(),
                                       got.toTupleRef().elements().end());
    if (w.size() != g.size()) {
      return cat(where, ": expected ", w.size(), " items, got ", g.size());
    }
    for (size_t i = 0; i < w.size(); ++i) {
      std::string d =
          value_difference(w[i], g[i], tolerance, cat(where, "[", i, "]"));
      if (!d.empty()) return d;
    }
    return "";
  }
  if (want.tagKind() != got.tagKind()) {
    return cat(where, ": expected a ", want.tagKind(), ", got a ",
               got.tagKind());
  }
  return want == got ? "" : cat(where, ": values differ");
}

// The output of `module` on the bundle's inputs, or the error.
absl::StatusOr<c10::IValue> run_module(GraphModule& module,
                                       const Bundle& bundle) {
  try {
    return module.forward(cloned_inputs(bundle));
  } catch (const std::exception& e) {
    return absl::FailedPreconditionError(e.what());
  }
}

}  // namespace fx::host::plugin_check_internal
