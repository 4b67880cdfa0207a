// cse (libfx_passes.so): common subexpression elimination as torch.fx's
// CSEPass. Nodes of the same op, target, args and kwargs merge into the
// first; placeholders, outputs and get_attr nodes stay, and so do impure
// nodes and values that may not be shared (node_effects.h).
#include <cstddef>
#include <string>
#include <unordered_map>

#include "fx/plugin_api.hpp"
#include "plugins/common/plugin_util.h"
#include "plugins/passes/node_effects.h"
#include "plugins/passes/passes.h"

namespace fx_passes {

using fxp::Graph;
using fxp::Node;

bool cse(Graph& g, const fxp::Options&) {
  std::unordered_map<std::string, Node> seen;
  bool changed = false;
  for (Node n : g) {
    FxOpcode op = n.op();
    // As torch.fx's CSEPass, placeholders, outputs and get_attr nodes are
    // kept as they are.
    if (op == FX_OP_PLACEHOLDER || op == FX_OP_OUTPUT || op == FX_OP_GET_ATTR) {
      continue;
    }
    if (n.is_impure() || unsafe_to_share(n)) continue;
    std::string key = std::to_string(op) + "|" + std::string(n.target()) + "|";
    for (size_t i = 0; i < n.num_args(); ++i) {
      fx_plugins::append_key(n.arg(i), key);
      key += ",";
    }
    key += "|";
    for (size_t i = 0; i < n.num_kwargs(); ++i) {
      std::string k = n.kwarg_key(i);
      key += std::to_string(k.size()) + ":" + k + "=";
      fx_plugins::append_key(n.kwarg_value(i), key);
      key += ",";
    }
    auto [it, inserted] = seen.emplace(key, n);
    if (inserted) continue;
    n.replace_all_uses_with(it->second);
    g.erase_node(n);
    changed = true;
  }
  return changed;
}

}  // namespace fx_passes
