// relu_to_mul: the template's one pass, relu(x) -> (x > 0) * x, for
// torch.relu(x), F.relu(x) and x.relu(). Replace it with your own; the
// plugin API is fx/plugin_api.hpp (the C++ wrapper over fx/plugin_api.h).
#include <utility>

#include "fx/plugin_api.hpp"

namespace {

bool relu_to_mul(fxp::Graph& g, const fxp::Options&) {
  bool changed = false;
  for (auto [op, target] :
       {std::pair{FX_OP_CALL_FUNCTION, "torch.relu"},
        std::pair{FX_OP_CALL_FUNCTION, "torch.nn.functional.relu"},
        std::pair{FX_OP_CALL_METHOD, "relu"}}) {
    for (fxp::Node n : g.find_nodes(op, target)) {
      auto guard = g.inserting_before(n);  // new nodes go before n
      fxp::Value x = n.arg(0).node();
      fxp::Value y = (x > 0) * x;  // records operator.gt, operator.mul
      n.replace_all_uses_with(y.node());
      g.erase_node(n);
      changed = true;
    }
  }
  return changed;
}

}  // namespace

FXP_PLUGIN("plugin_template", "0.1",
           fxp::pass<relu_to_mul>("relu_to_mul", "relu(x) -> (x > 0) * x")
               .invalidates({"tensor_meta"}))
