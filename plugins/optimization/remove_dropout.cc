// remove_dropout (libfx_optimization.so): torch 1.13's
// torch.fx.experimental.optimization.remove_dropout(model), a Transformer
// that retraces the graph and lets each torch.nn.Dropout call_module (that
// type exactly: not Dropout2d, not F.dropout) return its input. The
// retrace keeps the nodes but no type annotation, so every node's type is
// cleared too (meta is kept), and names each node afresh: where that
// differs (a name freed by a removed dropout, e.g. F.dropout's node
// `dropout_1` becomes `dropout` when the module node `dropout` goes, or
// make_fx's `clone`, which a retrace names `clone_default`) the node is
// renamed, and new nodes are then named as in the retraced graph. Its
// nodes lose meta['is_wrapped'] too: the code wraps no function.
#include <string>
#include <unordered_set>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/plugin_util.h"
#include "plugins/optimization/module_types.h"
#include "plugins/optimization/passes.h"
#include "plugins/optimization/retrace.h"

namespace fx_optimization {
namespace {

using fxp::Graph;
using fxp::Node;

[[noreturn]] void refuse_removal(const std::string& what) {
  fx_plugins::refuse_in("remove_dropout", FX_FAILED_PRECONDITION, what);
}

// The nodes torch's DropoutRemover drops: calls of a torch.nn.Dropout with
// one positional argument (the Transformer asserts that), a node.
std::vector<Node> dropouts(const Graph& g) {
  std::vector<Node> out;
  ModuleTypes types(g);
  for (Node n : g) {
    if (types.called(n) != "torch.nn.Dropout") continue;
    if (n.num_args() != 1) {
      refuse_removal("'" + std::string(n.name()) + "' calls a Dropout with " +
                     std::to_string(n.num_args()) +
                     " positional arguments; torch's remove_dropout asserts "
                     "exactly one");
    }
    if (!n.arg(0).is_node()) {
      refuse_removal("'" + std::string(n.name()) +
                     "' calls a Dropout on a constant");
    }
    out.push_back(n);
  }
  return out;
}

}  // namespace

bool remove_dropout(Graph& g, const fxp::Options&) {
  std::vector<Node> found = dropouts(g);
  // torch's remove_dropout transforms symbolic_trace(model), which runs
  // the calls that read no node rather than record them.
  const std::vector<Node> untraced = untraced_calls(g, "remove_dropout");
  std::unordered_set<FxNode*> removed;
  for (const Node& d : found) removed.insert(d.get());
  for (const Node& n : untraced) removed.insert(n.get());
  const fx_optimization::Renames renames =
      fx_optimization::retrace_names(g, removed, "remove_dropout");
  bool changed = !found.empty() || !renames.empty() || !untraced.empty();
  for (Node d : found) {
    d.replace_all_uses_with(d.arg(0).node());
    g.erase_node(d);
  }
  for (Node n : untraced) g.erase_node(n);
  fx_optimization::apply_retrace_names(g, renames);
  for (Node n : g) {
    // The Transformer records each call afresh, without the tracer's
    // meta['is_wrapped']: its code wraps nothing.
    changed |= unwrap(n);
    if (n.type().empty()) continue;
    n.set_type(nullptr);
    changed = true;
  }
  return changed;
}

}  // namespace fx_optimization
