#include "fx_core/capture/graph_decomposition.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <utility>
#include <vector>

#include "fx_core/capture/capture_extensions.h"
#include "fx_core/ir/node.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/interpreter.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/support/error.h"

namespace fx::capture {
namespace {

const c10::FunctionSchema& schema_of(const std::string& name) {
  auto dot = name.find('.', name.find("::"));
  c10::OperatorName op_name{name.substr(0, dot), dot == std::string::npos
                                                     ? ""
                                                     : name.substr(dot + 1)};
  return c10::Dispatcher::singleton()
      .findSchemaOrThrow(op_name.name.c_str(), op_name.overload_name.c_str())
      .schema();
}

std::string argument_names(const c10::FunctionSchema& schema) {
  std::string names;
  for (const auto& arg : schema.arguments()) {
    names += (names.empty() ? "" : ", ") + arg.name();
  }
  return names;
}

[[noreturn]] void refuse(const std::string& op, const std::string& why) {
  throw FxError("the replacement of " + op + " " + why);
}

// How many values the output node hands back (-1: one value, not a
// sequence).
int64_t output_arity(const Node& output) {
  if (output.args().empty()) return 0;
  const Argument& result = output.args()[0];
  if (result.is_sequence())
    return static_cast<int64_t>(result.elements().size());
  return -1;
}

// Checks `replacement` against `schema` (see the header).
void check_replacement(const std::string& op, const c10::FunctionSchema& schema,
                       const Graph& replacement) {
  size_t placeholders = 0;
  const Node* output = nullptr;
  for (const Node* node : replacement.nodes()) {
    const std::string name(node->name());
    switch (node->op()) {
      case Opcode::kPlaceholder:
        ++placeholders;
        break;
      case Opcode::kCallFunction:
        if (OpRegistry::global().resolve(Opcode::kCallFunction,
                                         node->target()) == nullptr) {
          refuse(op, "calls " + node->target() + " (node " + name +
                         "), which no kernel runs");
        }
        break;
      case Opcode::kOutput:
        output = node;
        break;
      default:
        refuse(op, "has node " + name +
                       " of another opcode than placeholder, call_function "
                       "and output");
    }
  }
  const size_t arguments = schema.arguments().size();
  if (placeholders != arguments) {
    refuse(op, "has " + std::to_string(placeholders) + " placeholders, but " +
                   op + "'s schema has " + std::to_string(arguments) +
                   " arguments (" + argument_names(schema) +
                   "): one placeholder each");
  }
  if (output == nullptr) refuse(op, "has no output node");
  const int64_t returns = static_cast<int64_t>(schema.returns().size());
  const int64_t arity = output_arity(*output);
  if (!(arity == returns || (arity == -1 && returns == 1))) {
    refuse(op, "returns " +
                   (arity < 0 ? std::string("one value")
                              : std::to_string(arity) + " values") +
                   ", but " + op + " returns " + std::to_string(returns));
  }
}

}  // namespace

Decomposition graph_decomposition(const std::string& op,
                                  const Graph& replacement) {
  const std::string name = canonical_op_name(op);
  const c10::FunctionSchema& schema = schema_of(name);
  check_replacement(name, schema, replacement);
  replacement.lint();
  const bool sequence = output_arity(*replacement.output_node()) >= 0;
  auto module = std::make_shared<GraphModule>(GraphModule::AttributeMap{},
                                              replacement.deepcopy());
  return [module, sequence](const std::vector<c10::IValue>& args) {
    c10::IValue result = Interpreter(*module).run(args);
    if (!sequence) return std::vector<c10::IValue>{std::move(result)};
    if (result.isTuple()) return result.toTupleRef().elements().vec();
    return result.toListRef().vec();
  };
}

}  // namespace fx::capture
