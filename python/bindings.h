// The parts of fx_sdk._C, one per file; fx_sdk_module.cc assembles them into
// the module. Bindings only: the work lives in fx_core and plugin_api.
//
// Errors cross as Python exceptions: an input the SDK cannot take (a graph,
// an argument value, a pipeline) raises ValueError; a misuse of a handle
// (a node of another graph, a graph replaced since it was read) raises
// RuntimeError or ValueError with the SDK's message.
#ifndef PYTHON_BINDINGS_H_
#define PYTHON_BINDINGS_H_

#include <ATen/core/ivalue.h>
#include <pybind11/pybind11.h>

#include <vector>

#include "absl/status/status.h"

namespace fx_sdk {

// Raises ValueError with the status's message.
[[noreturn]] void raise_value_error(const absl::Status& status);

// Python values (call arguments, a list) as the IValues GraphModule::forward
// takes (tensors shared, not copied).
std::vector<c10::IValue> to_ivalues(const pybind11::handle& sequence);

// fx_sdk._C.Graph, Node and the insertion-point guard (graph_api.cc).
void bind_graph(pybind11::module_& m);
// fx_sdk._C.CompiledGraph and _compile (compiled_graph.cc).
void bind_compiled_graph(pybind11::module_& m);

}  // namespace fx_sdk

#endif  // PYTHON_BINDINGS_H_
