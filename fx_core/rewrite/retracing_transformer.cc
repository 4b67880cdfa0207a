#include "fx_core/rewrite/retracing_transformer.h"

#include <utility>

#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {

RetracingTransformer::RetracingTransformer(GraphModule& module)
    : Transformer(module), tracer_(graph()) {}

RetracingTransformer::RetracingTransformer(GraphModule& module, Options options)
    : Transformer(module, options), tracer_(graph()) {}

RetracingTransformer::~RetracingTransformer() = default;

Value RetracingTransformer::value(const Argument& arg) {
  switch (arg.kind()) {
    case Argument::Kind::kNone:
      return Value();
    case Argument::Kind::kBool:
      return Value(arg.as_bool());
    case Argument::Kind::kInt:
      return Value(arg.as_int());
    case Argument::Kind::kFloat:
      return Value(arg.as_float());
    case Argument::Kind::kString:
      return Value(arg.as_string());
    case Argument::Kind::kNode:
      return Value(Proxy{arg.as_node(), &tracer_});
    case Argument::Kind::kList:
    case Argument::Kind::kTuple: {
      std::vector<Value> items;
      items.reserve(arg.elements().size());
      for (const Argument& a : arg.elements()) items.push_back(value(a));
      return arg.is_list() ? Value::list(std::move(items))
                           : Value::tuple(std::move(items));
    }
    case Argument::Kind::kEllipsis:
      return Value::ellipsis();
    default:
      throw FxError(cat("RetracingTransformer: a ", kind_name(arg.kind()),
                        " argument has no fx::Value form"));
  }
}

std::vector<Value> RetracingTransformer::values(const Node::Args& args) {
  std::vector<Value> out;
  out.reserve(args.size());
  for (const Argument& a : args) out.push_back(value(a));
  return out;
}

Argument RetracingTransformer::argument(const Value& v) {
  return tracer_.create_arg(v);
}

}  // namespace fx
