// The torch.fx docs' first transform as a pass plugin:
//
//   def transform(m: torch.nn.Module) -> torch.nn.Module:
//       gm = torch.fx.symbolic_trace(m)
//       for node in gm.graph.nodes:
//           if node.op == 'call_function' and node.target == torch.add:
//               node.target = torch.mul
//       gm.recompile()
//       return gm
//
// Built from plugin_api/include alone (no fx_core, no LibTorch) into
// libreplace_add_with_mul.so; the host loads it and recompiles the module
// after the pipeline. The operator form `x + y` (operator.add) is retargeted
// too unless `operator=false`.
#include "fx/plugin_api.hpp"

namespace {

bool replace_add_with_mul(fxp::Graph& graph, const fxp::Options& options) {
  bool changed = false;
  // find_nodes returns a snapshot, so retargeting while iterating is safe.
  for (fxp::Node node : graph.find_nodes(FX_OP_CALL_FUNCTION, "torch.add")) {
    node.set_target("torch.mul");
    changed = true;
  }
  if (options.get_bool("operator")) {
    for (fxp::Node node :
         graph.find_nodes(FX_OP_CALL_FUNCTION, "operator.add")) {
      node.set_target("operator.mul");
      changed = true;
    }
  }
  return changed;
}

}  // namespace

FXP_PLUGIN("replace_add_with_mul", "1.0",
           fxp::pass<replace_add_with_mul>(
               "replace_add_with_mul",
               "the torch.fx docs' transform: torch.add -> torch.mul")
               .option("operator", FX_OPTION_BOOL, "true",
                       "also retarget operator.add (x + y)"))
