// fx::capture::capture_node_shapes: one graph node's symbolic result, found
// by capturing its call with make_fx's symbolic mode (symbolic shape
// propagation's fallback for nodes no shape function covers: call_module,
// Python-level functions such as torch.nn.functional.relu, operator.add on
// tensors, methods that are no ATen operator).
//
// Contract (runtime/symbolic/symbolic_call_capture.h's):
//  - The node runs once as fx::Interpreter::run_node runs it (the module
//    registry's forward, the op registry's kernel), under make_fx's
//    symbolic mode with no grad: every tensor among its inputs (also in
//    lists and tuples) is a capture input whose sizes and strides are the
//    input node's symbolic ones (MakeFxOptions::declared_sizes, the
//    propagation's hints); every symbolic int among them is a SymInt of
//    the capture carrying its expression (the size of a 1-d carrier input
//    declared with it), so the call's kernel passes it on to ATen
//    symbolically (a kernel asking for the int itself specialises it, with
//    a guard); other inputs are their values at the hints.
//  - The result's tensors get the captured sizes and strides, expressions
//    of the propagation's symbols; each must equal `hint`'s at the hints.
//    Non-tensor results are their values at the hints.
//  - Guards the capture takes (C++ asking for a concrete size, a branch on
//    a size) are decided on the propagation's recorder.
//  - Throws FxError saying why when it cannot: an operator without a shape
//    function or meta kernel (named), data-dependent code (make_fx's
//    messages), a result that disagrees with the hint.
// Linking this library registers it as the propagation's call capture
// (set_symbolic_call_capture) at static initialisation.
#ifndef FX_CORE_CAPTURE_NODE_CAPTURE_H_
#define FX_CORE_CAPTURE_NODE_CAPTURE_H_

#include <ATen/core/ivalue.h>

#include <unordered_map>

#include "fx_core/runtime/symbolic/symbolic_shape_prop.h"
#include "fx_core/symbolic/guard_recorder.h"

namespace fx::capture {

SymbolicValue capture_node_shapes(
    GraphModule& gm, const Node& node,
    const std::unordered_map<const Node*, SymbolicValue>& values,
    const c10::IValue& hint, sym::GuardRecorder& guards);

}  // namespace fx::capture

#endif  // FX_CORE_CAPTURE_NODE_CAPTURE_H_
