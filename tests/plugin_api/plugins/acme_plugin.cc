// A vendor plugin whose pass is named like a first-party one: plugin 'acme',
// pass 'dce' (it turns operator.add into operator.sub, so which 'dce' ran is
// visible). Both run in one pipeline as acme.dce and fx_passes.dce.
#include "fx/plugin_api.hpp"

namespace {

bool acme_dce(fxp::Graph& g, const fxp::Options&) {
  bool changed = false;
  for (fxp::Node n : g.find_nodes(FX_OP_CALL_FUNCTION, "operator.add")) {
    n.set_target("operator.sub");
    changed = true;
  }
  return changed;
}

}  // namespace

FXP_PLUGIN("acme", "1.0",
           fxp::pass<acme_dce>("dce",
                               "acme's dce: operator.add -> operator.sub"))
