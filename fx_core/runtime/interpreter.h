// fx::Interpreter: runs a GraphModule node by node through overridable
// methods (torch.fx's `Interpreter`).
//
// run() executes each node with run_node(), which fetches the node's args
// and kwargs from the environment and dispatches on the opcode to
// placeholder(), get_attr(), call_function(), call_method(), call_module()
// or output(). Subclasses override any of them to observe or change
// execution (shape propagation, profiling, swapping ops) exactly as in
// torch.fx:
//
//   class NegSigmSwap : public fx::Interpreter {
//     using Interpreter::Interpreter;
//     c10::IValue call_function(const fx::Node& n, Args args,
//                               const Kwargs& kwargs) override {
//       if (n.target() == "torch.sigmoid") return at::neg(args[0].toTensor());
//       return Interpreter::call_function(n, std::move(args), kwargs);
//     }
//   };
//
// An initial environment pre-fills values for nodes (partial evaluation:
// those nodes are not run). With garbage_collect_values, each value is
// dropped from the environment after its last use, as torch.fx does.
//
// For speed without overrides, use GraphModule::forward (the compiled plan).
#ifndef FX_CORE_RUNTIME_INTERPRETER_H_
#define FX_CORE_RUNTIME_INTERPRETER_H_

#include <ATen/core/ivalue.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "fx_core/ir/argument.h"

namespace fx {

class GraphModule;
class Node;

class Interpreter {
 public:
  using Args = std::vector<c10::IValue>;
  using Kwargs = std::vector<std::pair<std::string, c10::IValue>>;
  using Env = absl::flat_hash_map<const Node*, c10::IValue>;

  explicit Interpreter(GraphModule& module, bool garbage_collect_values = true);
  virtual ~Interpreter();

  // Runs the graph on positional inputs; returns the output node's value.
  // As torch.fx's run(*args, enable_io_processing=True): the graph's CodeGen
  // maps the inputs to the placeholders (a pytree graph flattens forward's
  // arguments) and processes the output value. Without it the inputs are
  // the placeholders' values in order and the output node's value is
  // returned as it is.
  c10::IValue run(std::vector<c10::IValue> inputs, Env initial_env = {},
                  bool enable_io_processing = true);

  // Runs one node: fetches its arguments, dispatches on its opcode.
  virtual c10::IValue run_node(const Node& n);

  // One method per opcode. `args` and `kwargs` hold the node's arguments
  // with nodes replaced by their values.
  virtual c10::IValue placeholder(const Node& n, Args args,
                                  const Kwargs& kwargs);
  virtual c10::IValue get_attr(const Node& n, Args args, const Kwargs& kwargs);
  virtual c10::IValue call_function(const Node& n, Args args,
                                    const Kwargs& kwargs);
  virtual c10::IValue call_method(const Node& n, Args args,
                                  const Kwargs& kwargs);
  virtual c10::IValue call_module(const Node& n, Args args,
                                  const Kwargs& kwargs);
  virtual c10::IValue output(const Node& n, Args args, const Kwargs& kwargs);

  // The attribute at a dotted path of the module (torch.fx's fetch_attr):
  // its parameter or buffer, else its foreign attribute's value (a host
  // language's object, GraphModule::foreign_targets). Throws FxError naming
  // the path when neither exists.
  c10::IValue fetch_attr(const std::string& target) const;
  // The node's args and kwargs with nodes replaced by their values.
  std::pair<Args, Kwargs> fetch_args_kwargs_from_env(const Node& n) const;
  // One argument with nodes replaced by their values.
  c10::IValue map_nodes_to_values(const Argument& arg, const Node& n) const;

  GraphModule& module() { return module_; }
  const Env& env() const { return env_; }

 protected:
  GraphModule& module_;
  bool garbage_collect_values_;
  Env env_;

 private:
  std::vector<c10::IValue> inputs_;
  size_t next_input_ = 0;
};

}  // namespace fx

#endif  // FX_CORE_RUNTIME_INTERPRETER_H_
