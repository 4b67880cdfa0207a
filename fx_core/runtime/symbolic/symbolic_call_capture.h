// The call capture symbolic shape propagation falls back to: a node's
// symbolic result computed by running its call (a module's forward, a
// Python-level function's kernel) on tensors whose sizes are the inputs'
// expressions, as make_fx(tracing_mode="symbolic") does.
//
// The capture lives above the runtime (fx_core/capture), so the runtime
// only holds this slot; fx_core/capture's make_fx library fills it when it
// is linked (node_capture.h). Contract of a capture:
//  - `values` holds the symbolic value of every node before `node`; `hint`
//    is `node`'s value at the hints (meta tensors);
//  - it returns `node`'s value: tensors' sizes and strides as expressions
//    of the same symbols, equal to `hint`'s at the hints;
//  - every decision it takes on a symbol is decided on `guards` (so joins
//    the propagation's guards);
//  - it throws FxError saying why it cannot (the caller names the node).
//
// Threads: set once, at static initialisation; read-only afterwards.
#ifndef FX_CORE_RUNTIME_SYMBOLIC_SYMBOLIC_CALL_CAPTURE_H_
#define FX_CORE_RUNTIME_SYMBOLIC_SYMBOLIC_CALL_CAPTURE_H_

#include <ATen/core/ivalue.h>

#include <functional>
#include <unordered_map>

#include "fx_core/runtime/symbolic/symbolic_shape_prop.h"
#include "fx_core/symbolic/guard_recorder.h"

namespace fx {

using SymbolicCallCapture = std::function<SymbolicValue(
    GraphModule& gm, const Node& node,
    const std::unordered_map<const Node*, SymbolicValue>& values,
    const c10::IValue& hint, sym::GuardRecorder& guards)>;

// Registers the capture (replacing any before it).
void set_symbolic_call_capture(SymbolicCallCapture capture);

// The registered capture; empty when none is.
const SymbolicCallCapture& symbolic_call_capture();

}  // namespace fx

#endif  // FX_CORE_RUNTIME_SYMBOLIC_SYMBOLIC_CALL_CAPTURE_H_
