// fx::GraphAppendingTracer: retracing onto an existing Graph (torch.fx's
// proxy.GraphAppendingTracer).
//
// A C++ function written against fx::Value can be "called" on nodes of a
// graph being built: wrap the nodes as proxies of this tracer, call the
// function, and what it does is appended to the graph at its insertion
// point. The docs' decompose example:
//
//   fx::Value relu_decomposition(fx::Value x) { return (x > 0) * x; }
//
//   fx::GraphAppendingTracer tracer(new_graph);
//   fx::Value out = relu_decomposition(tracer.proxy(env[x]));
//   env[node] = out.node();
//
// Inside a Transformer override, trace onto graph() the same way and return
// tracer.to_argument(result).
//
// Real tensors used in the function become get_attr nodes of tensor
// constants (`_tensor_constant0`, ...): tensor_constants() lists them for the
// module that will own the graph (GraphModule::set_attr).
#ifndef FX_CORE_REWRITE_GRAPH_APPENDING_TRACER_H_
#define FX_CORE_REWRITE_GRAPH_APPENDING_TRACER_H_

#include <optional>
#include <string_view>

#include "fx_core/argument.h"
#include "fx_core/graph.h"
#include "fx_core/tracer/proxy.h"
#include "fx_core/tracer/tracer.h"

namespace fx {

class GraphAppendingTracer : public Tracer {
 public:
  // `graph` must outlive the tracer and the proxies it makes.
  explicit GraphAppendingTracer(Graph& graph) : graph_(graph) {}

  // A proxy of `node` (a node of graph()) for this tracer.
  Value proxy(Node* node) { return Value(Proxy{node, this}); }
  // An argument with its nodes as proxies: lists, tuples and literals as
  // Values (dicts and slices are refused with FxError).
  Value to_value(const Argument& arg);
  // A Value back as a node argument (proxies become their nodes).
  Argument to_argument(const Value& v) { return create_arg(v); }

  Graph& appended_graph() { return graph_; }

  Node* create_node(Opcode op, std::string_view target, Node::Args args,
                    Node::Kwargs kwargs,
                    std::optional<std::string_view> name = {},
                    std::string_view type = {}) override;

 private:
  Graph& graph_;
};

}  // namespace fx

#endif  // FX_CORE_REWRITE_GRAPH_APPENDING_TRACER_H_
