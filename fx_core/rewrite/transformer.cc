#include "fx_core/rewrite/transformer.h"

#include <utility>

#include "fx_core/ir/codegen.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {

Transformer::Transformer(GraphModule& module)
    : Transformer(module, Options()) {}

Transformer::Transformer(GraphModule& module, Options options)
    : module_(module),
      options_(options),
      new_graph_(std::make_unique<Graph>()) {
  new_graph_->set_codegen(module.graph().codegen().clone());
}

Transformer::~Transformer() = default;

Argument Transformer::map_to_new(const Argument& arg) const {
  return map_arg(arg, [this](Node* n) -> Argument {
    auto it = env_.find(n);
    if (it == env_.end()) {
      throw FxError(cat("Transformer: Node '", n->name(),
                        "' is used before it was transformed"));
    }
    return it->second;
  });
}

Argument Transformer::run_node(const Node& n) {
  Node::Args args;
  for (const Argument& a : n.args()) args.push_back(map_to_new(a));
  Node::Kwargs kwargs;
  for (const auto& kv : n.kwargs()) {
    kwargs.emplace_back(kv.first, map_to_new(kv.second));
  }
  const std::string& target = n.target();
  switch (n.op()) {
    case Opcode::kPlaceholder:
      return placeholder(n, target, std::move(args), std::move(kwargs));
    case Opcode::kGetAttr:
      return get_attr(n, target, std::move(args), std::move(kwargs));
    case Opcode::kCallFunction:
      return call_function(n, target, std::move(args), std::move(kwargs));
    case Opcode::kCallMethod:
      return call_method(n, target, std::move(args), std::move(kwargs));
    case Opcode::kCallModule:
      return call_module(n, target, std::move(args), std::move(kwargs));
    case Opcode::kOutput:
      return output(n, target, std::move(args), std::move(kwargs));
  }
  throw FxError(cat("Transformer: unknown opcode of node '", n.name(), "'"));
}

Argument Transformer::placeholder(const Node& n, std::string_view target,
                                  Node::Args args, Node::Kwargs kwargs) {
  (void)n;
  (void)kwargs;
  std::optional<Argument> default_value;
  if (!args.empty()) default_value = std::move(args[0]);
  return Argument(
      new_graph_->placeholder(target, {}, std::move(default_value)));
}

Argument Transformer::get_attr(const Node& n, std::string_view target,
                               Node::Args args, Node::Kwargs kwargs) {
  (void)n;
  (void)args;
  (void)kwargs;
  return Argument(new_graph_->get_attr(target));
}

Argument Transformer::call_function(const Node& n, std::string_view target,
                                    Node::Args args, Node::Kwargs kwargs) {
  (void)n;
  return Argument(
      new_graph_->call_function(target, std::move(args), std::move(kwargs)));
}

Argument Transformer::call_method(const Node& n, std::string_view target,
                                  Node::Args args, Node::Kwargs kwargs) {
  (void)n;
  return Argument(
      new_graph_->call_method(target, std::move(args), std::move(kwargs)));
}

Argument Transformer::call_module(const Node& n, std::string_view target,
                                  Node::Args args, Node::Kwargs kwargs) {
  (void)n;
  return Argument(
      new_graph_->call_module(target, std::move(args), std::move(kwargs)));
}

Argument Transformer::output(const Node& n, std::string_view target,
                             Node::Args args, Node::Kwargs kwargs) {
  (void)n;
  (void)target;
  (void)kwargs;
  return args.empty() ? Argument() : std::move(args[0]);
}

std::shared_ptr<GraphModule> Transformer::transform() {
  if (transformed_) {
    throw FxError("Transformer: transform() may only be called once");
  }
  transformed_ = true;
  const Graph& old = module_.graph();
  std::optional<Argument> result;
  const Node* old_output = nullptr;
  for (const Node* n : old.nodes()) {
    Node* last_before = new_graph_->last();
    Argument value = run_node(*n);
    if (n->op() == Opcode::kOutput) {
      result = std::move(value);
      old_output = n;
      break;
    }
    // Meta (and the code-relevant is_wrapped flag even without keep_meta)
    // onto every node this node created.
    const ArgumentDict& meta = n->meta();
    if (!meta.empty()) {
      Node* first_new =
          last_before == nullptr ? new_graph_->first() : last_before->next();
      for (Node* m = first_new; m != nullptr; m = m->next()) {
        for (const auto& [key, v] : meta) {
          if (!options_.keep_meta && key != "is_wrapped") continue;
          if (m->meta_value(key) == nullptr) m->set_meta(key, v);
        }
      }
    }
    env_.emplace(n, std::move(value));
  }
  if (result) {
    Node* out = new_graph_->output(std::move(*result));
    if (options_.keep_meta && old_output != nullptr) {
      for (const auto& [key, v] : old_output->meta()) out->set_meta(key, v);
    }
  }
  auto result_module =
      std::make_shared<GraphModule>(module_, std::move(new_graph_));
  // graph() stays usable (an empty graph) after the result took the graph.
  new_graph_ = std::make_unique<Graph>();
  return result_module;
}

}  // namespace fx
