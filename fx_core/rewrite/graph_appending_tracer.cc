#include "fx_core/rewrite/graph_appending_tracer.h"

#include <utility>
#include <vector>

#include "fx_core/error.h"
#include "fx_core/strings.h"

namespace fx {

Node* GraphAppendingTracer::create_node(Opcode op, std::string_view target,
                                        Node::Args args, Node::Kwargs kwargs,
                                        std::optional<std::string_view> name,
                                        std::string_view type) {
  return graph_.create_node(op, target, std::move(args), std::move(kwargs),
                            name, type);
}

Value GraphAppendingTracer::to_value(const Argument& arg) {
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
      return proxy(arg.as_node());
    case Argument::Kind::kList:
    case Argument::Kind::kTuple: {
      std::vector<Value> items;
      for (const Argument& a : arg.elements()) items.push_back(to_value(a));
      return arg.is_list() ? Value::list(std::move(items))
                           : Value::tuple(std::move(items));
    }
    case Argument::Kind::kEllipsis:
      return Value::ellipsis();
    default:
      throw FxError(cat("GraphAppendingTracer: a ", kind_name(arg.kind()),
                        " argument has no fx::Value form here"));
  }
}

}  // namespace fx
