#include "plugins/optimization/retrace.h"

#include <string>
#include <unordered_set>

namespace fx_optimization {

void require_retrace_names(const fxp::Graph& g,
                           const std::unordered_set<FxNode*>& removed,
                           const std::string& pass) {
  fxp::OwnedGraph scratch;
  for (fxp::Node n : g) {
    if (removed.count(n.get()) != 0) continue;
    // A placeholder is named from its target, the output "output".
    const bool named_by_target =
        n.op() == FX_OP_PLACEHOLDER || n.op() == FX_OP_OUTPUT;
    fxp::Node fresh =
        scratch.view().create_node(n.op(), n.target_cstr(), {}, {},
                                   named_by_target ? n.target_cstr() : nullptr);
    if (fresh.name() != n.name()) {
      throw fxp::Error(FX_FAILED_PRECONDITION,
                       pass + ": torch's retrace would name node '" +
                           std::string(n.name()) + "' '" +
                           std::string(fresh.name()) +
                           "' (it names every node afresh from its target); "
                           "renaming nodes is not in the plugin API");
    }
  }
}

}  // namespace fx_optimization
