// dce (libfx_passes.so): torch.fx's Graph.eliminate_dead_code. Unused
// nodes go, from the last back; impure nodes stay, and so do mutations and
// random draws nothing uses (node_effects.h).
#include <cstddef>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/passes/node_effects.h"
#include "plugins/passes/passes.h"

namespace fx_passes {

using fxp::Graph;
using fxp::Node;

// torch.fx's Graph.eliminate_dead_code, except that a node a program
// observes stays even when nothing uses its value, where torch.fx 1.13
// drops it: an operator that writes an argument (x.add_(1), operator.iadd,
// setitem) and a random draw (dropping one shifts every later draw).
bool dce(Graph& g, const fxp::Options&) {
  std::vector<Node> order;
  for (Node n : g) order.push_back(n);
  bool changed = false;
  for (size_t i = order.size(); i-- > 0;) {
    Node n = order[i];
    if (n.num_users() > 0 || n.is_impure() || mutates(n) ||
        (n.operator_effects() & FX_EFFECT_NONDETERMINISTIC)) {
      continue;
    }
    g.erase_node(n);
    changed = true;
  }
  return changed;
}

}  // namespace fx_passes
