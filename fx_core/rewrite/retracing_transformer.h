// fx::RetracingTransformer: a Transformer whose overrides are written with
// fx::Value, as Python's Transformer overrides are written with Proxies.
//
// value() turns an argument of the new graph into a Value (its nodes as
// proxies of a GraphAppendingTracer over graph()); operations on those
// Values append to the new graph; argument() turns the result back:
//
//   struct NegSigmSwap : fx::RetracingTransformer {
//     using RetracingTransformer::RetracingTransformer;
//     fx::Argument call_function(const fx::Node& n, std::string_view target,
//                                fx::Node::Args args,
//                                fx::Node::Kwargs kwargs) override {
//       if (target == "torch.sigmoid") {
//         return argument(fx::th::neg(value(args[0])));
//       }
//       return Transformer::call_function(n, target, std::move(args),
//                                         std::move(kwargs));
//     }
//   };
//
// Nodes made this way get the original node's meta like any other (see
// Transformer). Real tensors cannot become arguments (GraphAppendingTracer
// refuses them: there is no module to hold them).
#ifndef FX_CORE_REWRITE_RETRACING_TRANSFORMER_H_
#define FX_CORE_REWRITE_RETRACING_TRANSFORMER_H_

#include <vector>

#include "fx_core/ir/argument.h"
#include "fx_core/rewrite/transformer.h"
#include "fx_core/tracer/proxy.h"
#include "fx_core/tracer/tracer.h"

namespace fx {

class RetracingTransformer : public Transformer {
 public:
  explicit RetracingTransformer(GraphModule& module);
  RetracingTransformer(GraphModule& module, Options options);
  ~RetracingTransformer() override;

  // An argument of the new graph as a Value: nodes become proxies; None,
  // bools, ints, floats, strings, lists and tuples their Values. Throws
  // FxError for other kinds (dicts, slices, torch enums).
  Value value(const Argument& arg);
  // All of a node's mapped args as Values.
  std::vector<Value> values(const Node::Args& args);
  // A Value as an argument of the new graph (proxies become their nodes).
  Argument argument(const Value& v);

  GraphAppendingTracer& tracer() { return tracer_; }

 private:
  GraphAppendingTracer tracer_;
};

}  // namespace fx

#endif  // FX_CORE_REWRITE_RETRACING_TRANSFORMER_H_
