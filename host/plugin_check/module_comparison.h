// What fx plugin-check compares: a module's state (its fx-graph JSON and
// weights) before and after, and its outputs against the unchanged module's
// within a tolerance. Private to host/plugin_check.
#ifndef HOST_PLUGIN_CHECK_MODULE_COMPARISON_H_
#define HOST_PLUGIN_CHECK_MODULE_COMPARISON_H_

#include <ATen/core/ivalue.h>

#include <string>

#include "absl/status/statusor.h"
#include "fx/plugin_api.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "host/plugin_check/graph_bundle.h"

namespace fx::host::plugin_check_internal {

// A module as a bundle in memory, its weights copied.
struct State {
  std::string json;
  TensorList weights;
};

// The state of `module`, its weights copied.
absl::StatusOr<State> state_of(const GraphModule& module);

// Empty when equal; else what differs.
std::string state_difference(const State& a, const State& b);

// `value` in its shortest round-trip form ("0.0001", "1e-06", "nan").
std::string number_text(double value);

// Empty when `got` matches `want` within the tolerances; else where not.
std::string value_difference(const c10::IValue& want, const c10::IValue& got,
                             const FxTolerance& tolerance,
                             const std::string& where);

// The output of `module` on the bundle's inputs, or the error.
absl::StatusOr<c10::IValue> run_module(GraphModule& module,
                                       const Bundle& bundle);

}  // namespace fx::host::plugin_check_internal

#endif  // HOST_PLUGIN_CHECK_MODULE_COMPARISON_H_
