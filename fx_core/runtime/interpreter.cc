#include "fx_core/runtime/interpreter.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/runtime/runtime_codegen.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

// For each node, the values whose last use it is (torch.fx's
// user_to_last_uses), as one chain per node in a single array.
class LastUses {
 public:
  LastUses() = default;
  explicit LastUses(const Graph& graph) {
    absl::flat_hash_map<const Node*, const Node*> last_use;
    last_use.reserve(graph.size());
    for (Node* n : graph.nodes()) {
      auto note = [&](Node* input) { last_use[input] = n; };
      for (const Argument& a : n->args()) for_each_node(a, note);
      for (const auto& kv : n->kwargs()) for_each_node(kv.second, note);
    }
    head_.reserve(last_use.size());
    freed_.reserve(last_use.size());
    for (const auto& [value, user] : last_use) {
      uint32_t& head = head_[user];
      freed_.push_back({value, head});
      head = static_cast<uint32_t>(freed_.size());
    }
  }

  template <typename Fn>
  void for_each_freed_by(const Node* user, Fn&& fn) const {
    auto it = head_.find(user);
    if (it == head_.end()) return;
    for (uint32_t i = it->second; i != 0; i = freed_[i - 1].next) {
      fn(freed_[i - 1].value);
    }
  }

 private:
  struct Freed {
    const Node* value;
    uint32_t next;  // 1 + the index of the user's next entry; 0 ends
  };
  absl::flat_hash_map<const Node*, uint32_t> head_;  // 1 + the first index
  std::vector<Freed> freed_;
};

}  // namespace

Interpreter::Interpreter(GraphModule& module, bool garbage_collect_values)
    : module_(module), garbage_collect_values_(garbage_collect_values) {}

Interpreter::~Interpreter() = default;

c10::IValue Interpreter::run(std::vector<c10::IValue> inputs, Env initial_env,
                             bool enable_io_processing) {
  env_ = std::move(initial_env);
  const Graph& graph = module_.graph();
  inputs_ = enable_io_processing
                ? process_inputs(graph.codegen(), std::move(inputs))
                : std::move(inputs);
  next_input_ = 0;

  const LastUses to_free =
      garbage_collect_values_ ? LastUses(graph) : LastUses();

  for (Node* n : graph.nodes()) {
    // Partial evaluation: the value was given, the node is not run. As in
    // torch.fx, a given placeholder consumes no input.
    if (env_.contains(n)) continue;
    c10::IValue value;
    try {
      value = run_node(*n);
    } catch (const FxError& e) {
      throw FxError(cat("while running node '", n->name(), "' (",
                        opcode_name(n->op()), " ", n->target(),
                        "): ", e.what()));
    } catch (const c10::Error& e) {
      throw FxError(cat("while running node '", n->name(), "' (",
                        opcode_name(n->op()), " ", n->target(),
                        "): ", e.what_without_backtrace()));
    } catch (const std::exception& e) {
      throw FxError(cat("while running node '", n->name(), "' (",
                        opcode_name(n->op()), " ", n->target(),
                        "): ", e.what()));
    }
    // As torch.fx: the value is stored (the output node's too), then the
    // values whose last use this node was are dropped.
    env_[n] = std::move(value);
    to_free.for_each_freed_by(n, [&](const Node* dead) { env_.erase(dead); });
    if (n->op() == Opcode::kOutput) {
      inputs_.clear();
      return enable_io_processing ? process_outputs(graph.codegen(), env_.at(n))
                                  : env_.at(n);
    }
  }
  inputs_.clear();
  return c10::IValue();
}

c10::IValue Interpreter::run_node(const Node& n) {
  auto [args, kwargs] = fetch_args_kwargs_from_env(n);
  switch (n.op()) {
    case Opcode::kPlaceholder:
      return placeholder(n, std::move(args), kwargs);
    case Opcode::kGetAttr:
      return get_attr(n, std::move(args), kwargs);
    case Opcode::kCallFunction:
      return call_function(n, std::move(args), kwargs);
    case Opcode::kCallMethod:
      return call_method(n, std::move(args), kwargs);
    case Opcode::kCallModule:
      return call_module(n, std::move(args), kwargs);
    case Opcode::kOutput:
      return output(n, std::move(args), kwargs);
  }
  throw FxError("unknown opcode");
}

c10::IValue Interpreter::placeholder(const Node& n, Args args,
                                     const Kwargs& /*kwargs*/) {
  if (!n.target().empty() && n.target()[0] == '*') {
    std::vector<c10::IValue> rest(
        std::make_move_iterator(inputs_.begin() +
                                std::min(next_input_, inputs_.size())),
        std::make_move_iterator(inputs_.end()));
    next_input_ = inputs_.size();
    return make_tuple(std::move(rest));
  }
  if (next_input_ < inputs_.size()) return std::move(inputs_[next_input_++]);
  if (!args.empty()) return args[0];  // the default value
  throw FxError(cat("Expected positional argument for parameter ", n.target(),
                    ", but one was not passed in!"));
}

c10::IValue Interpreter::get_attr(const Node& n, Args /*args*/,
                                  const Kwargs& /*kwargs*/) {
  return fetch_attr(n.target());
}

c10::IValue Interpreter::call_function(const Node& n, Args args,
                                       const Kwargs& kwargs) {
  return call_op(
      module_.foreign_targets().get(Opcode::kCallFunction, n.target()),
      std::move(args), kwargs);
}

c10::IValue Interpreter::call_method(const Node& n, Args args,
                                     const Kwargs& kwargs) {
  return call_op(module_.foreign_targets().get(Opcode::kCallMethod, n.target()),
                 std::move(args), kwargs);
}

c10::IValue Interpreter::call_module(const Node& n, Args args,
                                     const Kwargs& kwargs) {
  std::shared_ptr<torch::nn::Module> m = module_.get_submodule(n.target());
  if (!m) {
    throw FxError(cat("Node referenced nonexistent target ", n.target()));
  }
  return fx::call_module(*m, n.target(), std::move(args), kwargs);
}

c10::IValue Interpreter::output(const Node& /*n*/, Args args,
                                const Kwargs& /*kwargs*/) {
  return args.empty() ? c10::IValue() : std::move(args[0]);
}

c10::IValue Interpreter::fetch_attr(const std::string& target) const {
  at::Tensor t = module_.get_attr(target);
  if (t.defined()) return t;
  const ForeignAttribute* object =
      module_.foreign_targets().find_attribute(target);
  if (object == nullptr) {
    throw FxError(cat("Node referenced nonexistent target ", target));
  }
  return object->value;
}

c10::IValue Interpreter::map_nodes_to_values(const Argument& arg,
                                             const Node& n) const {
  switch (arg.kind()) {
    case Argument::Kind::kNode: {
      auto it = env_.find(arg.as_node());
      if (it == env_.end()) {
        throw FxError(cat("Node ", n.name(), " referenced nonexistent value ",
                          arg.as_node()->name(),
                          "! Run Graph.lint() to diagnose such issues"));
      }
      return it->second;
    }
    case Argument::Kind::kList:
    case Argument::Kind::kTuple: {
      std::vector<c10::IValue> items;
      items.reserve(arg.elements().size());
      for (const Argument& a : arg.elements()) {
        items.push_back(map_nodes_to_values(a, n));
      }
      c10::IValue list = arg.is_list() ? make_list(std::move(items))
                                       : make_tuple_of(arg.named_tuple_type(),
                                                       std::move(items));
      check_value_depth(list);
      return list;
    }
    case Argument::Kind::kDict: {
      std::vector<c10::IValue> values;
      values.reserve(arg.items().size());
      for (const auto& kv : arg.items()) {
        values.push_back(map_nodes_to_values(kv.second, n));
      }
      c10::IValue value = make_dict_of(dict_key_values(arg), std::move(values));
      check_value_depth(value);
      return value;
    }
    case Argument::Kind::kSlice: {
      const ArgumentList& e = arg.elements();
      return make_slice(map_nodes_to_values(e[0], n),
                        map_nodes_to_values(e[1], n),
                        map_nodes_to_values(e[2], n));
    }
    default:
      return constant_value(arg);
  }
}

std::pair<Interpreter::Args, Interpreter::Kwargs>
Interpreter::fetch_args_kwargs_from_env(const Node& n) const {
  Args args;
  args.reserve(n.args().size());
  for (const Argument& a : n.args()) args.push_back(map_nodes_to_values(a, n));
  Kwargs kwargs;
  kwargs.reserve(n.kwargs().size());
  for (const auto& [key, value] : n.kwargs()) {
    kwargs.emplace_back(key, map_nodes_to_values(value, n));
  }
  return {std::move(args), std::move(kwargs)};
}

}  // namespace fx
