#include "fx_core/capture/node_capture.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/empty.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/capture/make_fx.h"
#include "fx_core/capture/sym_int_node.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/interpreter.h"
#include "fx_core/runtime/symbolic/shape_functions.h"
#include "fx_core/runtime/symbolic/symbolic_call_capture.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "fx_core/symbolic/shape_env.h"

namespace fx::capture {
namespace {

using Kind = SymbolicValue::Kind;
using Values = std::unordered_map<const Node*, SymbolicValue>;

// Runs one node on inputs given as an environment.
class NodeCall final : public Interpreter {
 public:
  NodeCall(GraphModule& gm, Env inputs) : Interpreter(gm, false) {
    env_ = std::move(inputs);
  }
};

bool is_symbolic_int(const SymbolicValue& v) {
  return v.kind == Kind::kInt && v.has_symbols();
}

// Whether `v` holds a tensor or a symbolic int (a capture input).
bool holds_input(const SymbolicValue& v) {
  if (v.kind == Kind::kTensor || is_symbolic_int(v)) return true;
  for (const SymbolicValue& item : v.items) {
    if (holds_input(item)) return true;
  }
  return false;
}

// A symbolic int is handed to the call as a SymInt of the capture with its
// expression: the size of a 1-d carrier input declared with that size
// (with its negation when the hint is negative, as sizes cannot be), so the
// capture takes it as it takes every tensor's sizes and needs no other kind
// of input. The carrier itself is never used.
at::Tensor carrier(int64_t hint) {
  return at::empty({hint < 0 ? -hint : hint},
                   at::TensorOptions().dtype(at::kLong).device(at::kMeta));
}

// The capture inputs in `v` (in order): tensors as their values at the
// hints with their symbolic sizes, symbolic ints as carriers.
void collect_inputs(const SymbolicValue& v, const sym::GuardRecorder& guards,
                    std::vector<at::Tensor>& examples,
                    std::vector<SymbolicSizes>& shapes) {
  if (is_symbolic_int(v)) {
    int64_t hint = guards.hint(v.integer);
    examples.push_back(carrier(hint));
    shapes.push_back({{hint < 0 ? -v.integer : v.integer}, {}});
    return;
  }
  if (v.kind == Kind::kTensor) {
    examples.push_back(v.hint.toTensor());
    shapes.push_back({v.sizes, v.strides});
  }
  for (const SymbolicValue& item : v.items) {
    collect_inputs(item, guards, examples, shapes);
  }
}

// `v` with its tensors replaced by the capture's inputs from `next` on, and
// its symbolic ints by their carriers' SymInts.
c10::IValue with_inputs(const SymbolicValue& v,
                        const std::vector<at::Tensor>& inputs,
                        const sym::GuardRecorder& guards, size_t& next) {
  if (v.kind == Kind::kTensor) return inputs.at(next++);
  if (is_symbolic_int(v)) {
    c10::SymInt size = inputs.at(next++).sym_size(0);
    return guards.hint(v.integer) < 0 ? c10::IValue(c10::SymInt(0) - size)
                                      : c10::IValue(size);
  }
  if (v.kind != Kind::kSequence || !holds_input(v)) return v.hint;
  std::vector<c10::IValue> items;
  for (const SymbolicValue& item : v.items) {
    items.push_back(with_inputs(item, inputs, guards, next));
  }
  return v.hint.isTuple() ? make_tuple(std::move(items))
                          : make_list(std::move(items));
}

// The defined tensors in `value`, in order.
void flatten_tensors(const c10::IValue& value, std::vector<at::Tensor>& out) {
  if (value.isTensor()) {
    if (value.toTensor().defined()) out.push_back(value.toTensor());
  } else if (is_sequence(value)) {
    for (const c10::IValue& item : sequence_elements(value)) {
      flatten_tensors(item, out);
    }
  }
}

// The captured sizes laid over the node's value at the hints, tensor by
// tensor in flatten_tensors' order.
SymbolicValue lay_over(const c10::IValue& hint,
                       const std::vector<SymbolicSizes>& captured, size_t& next,
                       const sym::GuardRecorder& guards) {
  if (hint.isTensor() && hint.toTensor().defined()) {
    if (next >= captured.size()) {
      throw FxError(
          "the captured call returned fewer tensors than the node's value "
          "at the hints holds");
    }
    const SymbolicSizes& s = captured[next++];
    c10::IntArrayRef actual = hint.toTensor().sizes();
    bool same = s.sizes.size() == actual.size();
    for (size_t d = 0; same && d < actual.size(); ++d) {
      same = guards.hint(s.sizes[d]) == actual[d];
    }
    if (!same) {
      std::string sizes;
      for (const sym::Expr& e : s.sizes)
        sizes += (sizes.empty() ? "" : ", ") + e.str();
      throw FxError(cat("the capture gives sizes [", sizes,
                        "] but the result at the hints has ",
                        c10::str(actual)));
    }
    SymbolicValue out = concrete_symbolic_value(hint);
    out.sizes = s.sizes;
    out.strides = s.strides;
    return out;
  }
  SymbolicValue out = concrete_symbolic_value(hint);
  if (out.kind == Kind::kSequence) {
    std::vector<c10::IValue> items = sequence_elements(hint);
    for (size_t i = 0; i < items.size(); ++i) {
      out.items[i] = lay_over(items[i], captured, next, guards);
    }
  }
  return out;
}

// The symbolic ints the call returned (SymInts of the capture, such as
// `x.shape[-2:]`'s items) laid over `out`, its value at the hints, as their
// expressions.
void take_symbolic_ints(const c10::IValue& result,
                        const sym::GuardRecorder& guards, SymbolicValue& out) {
  if (result.isSymInt()) {
    CaptureSymNode* s = capture_node(result.toSymInt());
    if (s == nullptr) return;
    if (!out.hint.isInt() || guards.hint(s->expr()) != out.hint.toInt()) {
      throw FxError(cat("the capture gives the int ", s->expr().str(),
                        " but the result at the hints is ",
                        out.hint.isInt() ? std::to_string(out.hint.toInt())
                                         : value_type_name(out.hint)));
    }
    out.kind = Kind::kInt;
    out.integer = s->expr();
    return;
  }
  if (out.kind != Kind::kSequence || !is_sequence(result)) return;
  std::vector<c10::IValue> items = sequence_elements(result);
  if (items.size() != out.items.size()) return;
  for (size_t i = 0; i < items.size(); ++i) {
    take_symbolic_ints(items[i], guards, out.items[i]);
  }
}

// The node's input nodes, each once, in order of use.
std::vector<const Node*> input_nodes(const Node& node) {
  std::vector<const Node*> out;
  auto visit = [&](const Argument& a) {
    for_each_node(a, [&](Node* input) {
      if (std::find(out.begin(), out.end(), input) == out.end()) {
        out.push_back(input);
      }
    });
  };
  for (const Argument& a : node.args()) visit(a);
  for (const auto& [name, a] : node.kwargs()) visit(a);
  return out;
}

}  // namespace

namespace {

// The composite operators (CompositeImplicitAutograd kernels) that have a
// shape function: recorded whole, their sizes from the shape function,
// since C++ composite kernels often ask for concrete sizes (linear on 3-d
// inputs, flatten) and so would specialise symbols.
const std::vector<std::string>& composites_with_shape_functions() {
  static const auto* names = [] {
    auto* out = new std::vector<std::string>();
    c10::Dispatcher& dispatcher = c10::Dispatcher::singleton();
    for (const c10::OperatorName& name : dispatcher.getAllOpNames()) {
      auto op = dispatcher.findOp(name);
      if (!op || !op->hasSchema() ||
          !op->hasKernelForDispatchKey(
              c10::DispatchKey::CompositeImplicitAutograd) ||
          !shape_graph_for(op->schema())) {
        continue;
      }
      out->push_back(name.overload_name.empty()
                         ? name.name
                         : name.name + "." + name.overload_name);
    }
    return out;
  }();
  return *names;
}

// One capture of `node`'s call: its result laid over `hint`, the guards
// it took decided on `guards`.
SymbolicValue capture_once(GraphModule& gm, const Node& node,
                           const Values& values, const c10::IValue& hint,
                           sym::GuardRecorder& guards,
                           const MakeFxOptions& options) {
  const std::vector<const Node*> inputs = input_nodes(node);
  std::vector<at::Tensor> examples;
  std::vector<SymbolicSizes> declared;
  for (const Node* input : inputs) {
    collect_inputs(values.at(input), guards, examples, declared);
  }
  if (examples.empty()) {
    throw FxError("it has no tensor or symbolic int input");
  }
  MakeFxOptions with_inputs_declared = options;
  with_inputs_declared.declared_sizes = std::move(declared);
  c10::IValue result;
  auto call = [&](const std::vector<at::Tensor>& tensors) {
    Interpreter::Env env;
    size_t next = 0;
    for (const Node* input : inputs) {
      env[input] = with_inputs(values.at(input), tensors, guards, next);
    }
    result = NodeCall(gm, std::move(env)).run_node(node);
    std::vector<at::Tensor> out;
    flatten_tensors(result, out);
    return out;
  };
  at::NoGradGuard no_grad;
  CapturedGraph captured = capture_graph(call, examples, with_inputs_declared);
  size_t next = 0;
  SymbolicValue out = lay_over(hint, captured.output_sizes, next, guards);
  if (next != captured.output_sizes.size()) {
    throw FxError(
        "the captured call returned more tensors than the node's value "
        "at the hints holds");
  }
  for (const sym::Relation& guard : captured.shape_env->guards()) {
    guards.decide(guard);
  }
  take_symbolic_ints(result, guards, out);
  return out;
}

}  // namespace

SymbolicValue capture_node_shapes(GraphModule& gm, const Node& node,
                                  const Values& values, const c10::IValue& hint,
                                  sym::GuardRecorder& guards) {
  MakeFxOptions options;
  options.tracing_mode = "symbolic";
  options.symbol_hints = guards.hints();
  options.leaf_ops = composites_with_shape_functions();
  try {
    return capture_once(gm, node, values, hint, guards, options);
  } catch (const std::exception&) {
    // A composite recorded whole that cannot run on meta tensors (its
    // decomposition reaches an operator without a meta kernel, as
    // batch_norm does): capture it decomposed.
  }
  options.leaf_ops.clear();
  return capture_once(gm, node, values, hint, guards, options);
}

namespace {

const bool kRegistered = [] {
  set_symbolic_call_capture(&capture_node_shapes);
  return true;
}();

}  // namespace

}  // namespace fx::capture
