// Running a GraphModule while watching every node's value, on real tensors or
// on meta tensors (sizes, strides and dtypes without data), and evaluating a
// node from the module's attributes alone: what shape propagation and
// constant folding are built on. The C ABI's GraphRun and GraphEvaluate are
// these functions behind the FxApi table.
//
//   fx::run_and_report(gm, {at::empty({1, 3, 224, 224}, at::kMeta)},
//                      fx::ExecutionMode::kMeta,
//                      [&](const fx::Node& n, const c10::IValue& v) {
//                        if (v.isTensor()) shapes[&n] = v.toTensor().sizes();
//                      });
//
// What runs. Nodes run in graph order through an fx::Interpreter, so every
// target the Interpreter can run (the op and module registries) runs here.
// With ExecutionMode::kReal that is all. With ExecutionMode::kMeta,
// placeholder, get_attr and output nodes run as usual (get_attr gives the
// module's real tensors) and each call node is computed in the first of
// these ways that works:
//   1. a shape rule, from the first argument's shape: ops that keep their
//      input's shape (relu, relu6, hardswish, hardtanh, batch_norm,
//      layer_norm as functions, Tensor methods or torch.nn modules) and the
//      Conv1d/2d/3d modules, whose meta kernels LibTorch 1.13 lacks;
//   2. the op's kernel on the meta tensors;
//   3. the op's kernel on uninitialised CPU tensors of the same sizes,
//      strides and dtypes (memory is allocated, the garbage it holds is
//      computed on and never read back; integral and bool ones are zeros,
//      so that indices are in range), whose tensor results become meta
//      tensors again. Output shapes that depend on data (nonzero,
//      masked_select) are then arbitrary.
//
// What is cached, process-wide. An op that fails in step 2 and then works in
// step 3 is remembered by its key ("call_function:torch.nn.functional.
// adaptive_avg_pool2d", "call_method:view", for call_module the module's
// type: "call_module:torch.nn.Conv2d"), and later meta runs in the process
// go to step 3 directly: a failed attempt costs a c10::Error with its
// backtrace. Any failure counts, including a meta tensor meeting one of the
// module's real tensors in an op that refuses mixed devices (`x * self.scale`
// remembers operator.mul). The set only grows; it is guarded by a mutex, so
// runs in several threads are safe as far as it is concerned. Running one
// GraphModule from several threads at once is as safe as running an
// fx::Interpreter on it (nodes only read the module). The shape rules'
// table is immutable.
//
// Grad mode is the caller's (the C ABI's GraphRun turns it on, as torch.fx
// runs). Under grad mode a tensor's requires_grad is autograd's: in steps 1
// and 3, which autograd does not see, a floating point result requires grad
// when an input (or a called module's parameter) does.
#ifndef FX_CORE_RUNTIME_META_EXECUTION_H_
#define FX_CORE_RUNTIME_META_EXECUTION_H_

#include <ATen/core/ivalue.h>

#include <functional>
#include <string>
#include <vector>

namespace fx {

class GraphModule;
class Node;

enum class ExecutionMode {
  kReal,  // every node computes on the inputs as given
  kMeta,  // shapes, strides and dtypes only (see above)
};

// Called after each node with the value it computed. The value is borrowed
// for the call (copy the IValue to keep it; copies share tensors).
using NodeValueFn =
    std::function<void(const Node& node, const c10::IValue& value)>;

// Runs `module`'s graph on positional `inputs` (as GraphModule::forward
// takes them; with enable_io_processing false, one per placeholder, as
// Interpreter::run takes them then) and calls `on_node`, when set, after
// every node in graph order: placeholders, get_attr and the output node
// included (the output node's value is the one before the CodeGen's output
// processing). Returns the module's output.
//
// With kMeta, tensors among `inputs` (also inside lists and tuples) that are
// not meta tensors are replaced by meta tensors of the same sizes, strides
// and dtype first.
//
// Errors: a node that fails throws FxError "while running node 'n' (opcode
// target): ...", as fx::Interpreter::run does. An exception thrown by
// `on_node` stops the run and propagates unchanged (of any type, not
// wrapped). The graph must not be changed while it runs.
c10::IValue run_and_report(GraphModule& module, std::vector<c10::IValue> inputs,
                           ExecutionMode mode, const NodeValueFn& on_node = {},
                           bool enable_io_processing = true);

// `value` with every tensor (also inside lists and tuples) replaced by an
// empty meta tensor of the same sizes, strides and dtype; undefined and meta
// tensors and values without tensors are returned as they are.
c10::IValue to_meta(const c10::IValue& value);

// Computes `node` of `module`'s graph from the module's attributes and the
// graph's literals alone: the nodes it depends on (get_attr nodes and what
// is computed from them) run in graph order on real tensors, nothing else
// runs. Nothing is cached between calls.
//
// Errors: FxError "node 'n' depends on placeholder 'x', so it is not a
// constant" when an input of the node, direct or not, is a placeholder;
// FxError when `node` is not a node of `module`'s graph; the exceptions of
// the kernels it runs propagate unchanged (without node context).
c10::IValue evaluate_constant(GraphModule& module, const Node& node);

// The keys of the ops found so far in this process to have no meta kernel
// (step 2 above failed for them), sorted.
std::vector<std::string> ops_without_meta_kernel();

}  // namespace fx

#endif  // FX_CORE_RUNTIME_META_EXECUTION_H_
