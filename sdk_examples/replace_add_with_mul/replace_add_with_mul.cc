#include "sdk_examples/replace_add_with_mul/replace_add_with_mul.h"

#include <string_view>
#include <utility>

namespace sdk_examples {

size_t replace_add_with_mul(fx::GraphModule& gm) {
  fx::Graph& graph = gm.graph();
  size_t changed = 0;
  for (auto [from, to] :
       {std::pair<std::string_view, std::string_view>{"torch.add", "torch.mul"},
        {"operator.add", "operator.mul"}}) {
    // find_nodes returns a snapshot, so retargeting while iterating is safe.
    for (fx::Node* node : graph.find_nodes(fx::Opcode::kCallFunction, from)) {
      node->set_target(to);
      ++changed;
    }
  }
  gm.recompile();
  return changed;
}

}  // namespace sdk_examples
