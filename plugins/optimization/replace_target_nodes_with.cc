// replace_target_nodes_with (libfx_optimization.so): torch 1.13's
// torch.fx.passes.graph_manipulation.replace_target_nodes_with. Every node
// whose opcode and target are `old_op` / `old_target` becomes a node of
// `new_op` / `new_target` with the same arguments and name. torch rebuilds
// the graph (create_node for those, node_copy for the rest) and assigns it
// to the module: the new nodes have no type annotation and no meta, every
// name stays, and the graph's namespace is a fresh graph's. Placeholders
// and the output are not replaced, nor made (torch would change the
// signature or the result): refused, as is an unknown opcode (torch
// asserts).
#include <string>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/plugin_util.h"
#include "plugins/optimization/passes.h"
#include "plugins/optimization/retrace.h"

namespace fx_optimization {
namespace {

using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

constexpr const char* kReplace = "replace_target_nodes_with";

// Refuses, naming the pass (torch raises or asserts there).
[[noreturn]] void refuse(const std::string& what) {
  fx_plugins::refuse_in(kReplace, FX_INVALID_ARGUMENT, what);
}

FxOpcode opcode(const fxp::Options& options, const char* option) {
  static const char* const kNames[] = {"placeholder",   "get_attr",
                                       "call_function", "call_method",
                                       "call_module",   "output"};
  const std::string name = options.get_string(option);
  for (int op = 0; op < 6; ++op) {
    if (name != kNames[op]) continue;
    if (op == FX_OP_PLACEHOLDER || op == FX_OP_OUTPUT) {
      refuse(std::string("option '") + option + "' is '" + name +
             "': placeholders and the output are not replaced (the "
             "graph's signature and result would change)");
    }
    return static_cast<FxOpcode>(op);
  }
  refuse(std::string("option '") + option + "' is '" + name +
         "', not one of get_attr, call_function, call_method, "
         "call_module");
}

// A function target as the graph holds it: torch's _get_qualified_name
// spells a builtin by its bare name (len), the graph as builtins.len.
std::string node_target(FxOpcode op, const std::string& target) {
  if (op != FX_OP_CALL_FUNCTION || target.empty() ||
      target.find('.') != std::string::npos) {
    return target;
  }
  return "builtins." + target;
}

}  // namespace

bool replace_target_nodes_with(Graph& g, const fxp::Options& options) {
  require_renaming(kReplace);
  const FxOpcode old_op = opcode(options, "old_op");
  const FxOpcode new_op = opcode(options, "new_op");
  const std::string old_given = options.get_string("old_target");
  const std::string old_target = node_target(old_op, old_given);
  const std::string new_target =
      node_target(new_op, options.get_string("new_target"));
  if (new_target.empty()) {
    refuse("option 'new_target' is empty");
  }
  Renames renames;
  for (Node n : g.nodes()) {
    if (n.op() != old_op ||
        (n.target() != old_target && n.target() != old_given)) {
      continue;
    }
    std::vector<Arg> args;
    for (const ArgView& a : n.args()) args.emplace_back(a);
    fxp::Kwargs kwargs;
    for (size_t i = 0; i < n.num_kwargs(); ++i) {
      kwargs.emplace_back(n.kwarg_key(i), Arg(n.kwarg_value(i)));
    }
    Node made;
    {
      fxp::InsertGuard at = g.inserting_before(n);
      made = g.create_node(new_op, new_target.c_str(), args, kwargs);
    }
    unwrap(made);  // torch's new node has no meta: its code wraps nothing
    n.replace_all_uses_with(made);
    renames.emplace_back(made, std::string(n.name()));
    g.erase_node(n);
  }
  apply_retrace_names(g, renames);  // torch assigns the module a new graph
  return !renames.empty();
}

}  // namespace fx_optimization
