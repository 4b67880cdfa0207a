// fx::Transformer: an Interpreter that builds a new GraphModule instead of
// computing values (torch.fx's `Transformer`).
//
// transform() walks the module's graph in order and, for each node, calls the
// method of its opcode with the node's args and kwargs mapped to the values
// already produced in the new graph (nodes of the new graph, or whatever an
// override returned). The default methods copy the node into the new graph,
// named from its target as torch.fx's Transformer names them; an override
// returns something else (a node it created through graph(), an existing
// value, a literal) to change the result:
//
//   class NegSigmSwap : public fx::Transformer {
//     using Transformer::Transformer;
//     fx::Argument call_function(const fx::Node& n, std::string_view target,
//                                fx::Node::Args args,
//                                fx::Node::Kwargs kwargs) override {
//       if (target == "torch.sigmoid")
//         return graph().call_function("torch.neg", std::move(args),
//                                      std::move(kwargs));
//       return Transformer::call_function(n, target, std::move(args),
//                                         std::move(kwargs));
//     }
//   };
//   std::shared_ptr<fx::GraphModule> out = NegSigmSwap(gm).transform();
//
// To write overrides with fx::Value, as Python's are written with Proxies
// (`return argument(fx::th::neg(value(args[0])))`), derive from
// RetracingTransformer (retracing_transformer.h).
//
// Meta: unless Options::keep_meta is false, every node created while a node
// runs (by the default methods or by an override) gets that node's meta
// entries it does not set itself (nodes appended to the new graph while
// it runs), placeholders and get_attr included (what
// torch.fx 2's preserve_node_meta does for its Transformer).
//
// The result is built from the module (its submodules and tensors, shared as
// torch.fx's GraphModule shares them) and keeps the graph's CodeGen. The
// output node is created by transform() from what output() returns.
#ifndef FX_CORE_REWRITE_TRANSFORMER_H_
#define FX_CORE_REWRITE_TRANSFORMER_H_

#include <memory>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "fx_core/ir/argument.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"

namespace fx {

class GraphModule;

class Transformer {
 public:
  struct Options {
    // Copy each original node's meta onto the nodes created for it.
    bool keep_meta = true;
  };

  explicit Transformer(GraphModule& module);
  Transformer(GraphModule& module, Options options);
  virtual ~Transformer();
  Transformer(const Transformer&) = delete;
  Transformer& operator=(const Transformer&) = delete;

  // Runs every node and returns the new GraphModule (named "GraphModule", as
  // torch.fx's). A Transformer transforms once; a second call throws FxError.
  std::shared_ptr<GraphModule> transform();

  // Maps the node's args and kwargs through the environment and dispatches
  // on its opcode.
  virtual Argument run_node(const Node& n);

  // One method per opcode: `n` is the original node, `args` and `kwargs` its
  // arguments mapped to new values. Each returns the node's new value.
  virtual Argument placeholder(const Node& n, std::string_view target,
                               Node::Args args, Node::Kwargs kwargs);
  virtual Argument get_attr(const Node& n, std::string_view target,
                            Node::Args args, Node::Kwargs kwargs);
  virtual Argument call_function(const Node& n, std::string_view target,
                                 Node::Args args, Node::Kwargs kwargs);
  virtual Argument call_method(const Node& n, std::string_view target,
                               Node::Args args, Node::Kwargs kwargs);
  virtual Argument call_module(const Node& n, std::string_view target,
                               Node::Args args, Node::Kwargs kwargs);
  // The value the new graph returns (args[0] by default).
  virtual Argument output(const Node& n, std::string_view target,
                          Node::Args args, Node::Kwargs kwargs);

  // The graph being built (torch.fx's new_graph).
  Graph& graph() { return *new_graph_; }
  // The module being transformed.
  GraphModule& module() { return module_; }
  // An argument with the original graph's nodes replaced by their new values.
  Argument map_to_new(const Argument& arg) const;

 protected:
  GraphModule& module_;
  Options options_;
  std::unique_ptr<Graph> new_graph_;
  absl::flat_hash_map<const Node*, Argument> env_;

 private:
  bool transformed_ = false;
};

}  // namespace fx

#endif  // FX_CORE_REWRITE_TRANSFORMER_H_
