// const_fold (libfx_passes.so): the subgraphs computed from tensor
// attributes alone are evaluated once (GraphEvaluate), each value a
// non-constant node uses stored as a new attribute (option `prefix`) and
// read back by a get_attr node; the constants left unused go. Values that
// may not be shared (node_effects.h) are never folded.
#include <algorithm>
#include <cstddef>
#include <string>
#include <unordered_set>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/passes/node_effects.h"
#include "plugins/passes/passes.h"

namespace fx_passes {
namespace {

using fxp::Graph;
using fxp::Node;

// The nodes computed from tensor attributes alone, in graph order.
struct Constants {
  std::unordered_set<FxNode*> nodes;
  std::vector<Node> order;
};

// Tensor attributes only (a get_attr of a submodule is not a value).
bool is_tensor_attr(Graph& g, const Node& n) {
  DLManagedTensor* t = nullptr;
  FxStatus* s =
      fxp::api()->GraphGetAttr(g.get(), std::string(n.target()).c_str(), &t);
  if (s) {
    fxp::api()->ReleaseStatus(s);
    return false;
  }
  fxp::Tensor(t).reset();
  return true;
}

Constants find_constants(Graph& g) {
  Constants constants;
  std::unordered_set<FxNode*>& constant = constants.nodes;
  for (Node n : g) {
    FxOpcode op = n.op();
    if (op == FX_OP_GET_ATTR) {
      if (!is_tensor_attr(g, n)) continue;
      constant.insert(n.get());
      constants.order.push_back(n);
      continue;
    }
    if (op != FX_OP_CALL_FUNCTION && op != FX_OP_CALL_METHOD &&
        op != FX_OP_CALL_MODULE) {
      continue;
    }
    if (n.is_impure() || unsafe_to_share(n)) continue;
    std::vector<Node> inputs = n.all_input_nodes();
    if (inputs.empty()) continue;  // not derived from attributes
    bool all = std::all_of(inputs.begin(), inputs.end(), [&](const Node& i) {
      return constant.count(i.get()) > 0;
    });
    if (all) {
      constant.insert(n.get());
      constants.order.push_back(n);
    }
  }
  return constants;
}

// The frontier: computed constants some non-constant node uses.
std::vector<Node> constant_frontier(const Constants& constants) {
  std::vector<Node> frontier;
  for (Node n : constants.order) {
    if (n.op() == FX_OP_GET_ATTR) continue;
    for (Node u : n.users()) {
      if (!constants.nodes.count(u.get())) {
        frontier.push_back(n);
        break;
      }
    }
  }
  return frontier;
}

// Evaluates each frontier node into a new attribute read by a get_attr node
// its non-constant users use instead.
bool fold_frontier(Graph& g, const std::vector<Node>& frontier,
                   const Constants& constants, const std::string& prefix) {
  int index = 0;
  bool changed = false;
  for (Node n : frontier) {
    fxp::Tensor value;
    fxp::evaluate(g, n, [&](fxp::RuntimeValue v) {
      if (v.is_tensor()) value = v.to_dlpack();
    });
    if (!value) continue;  // a non-tensor constant stays as it is
    std::string name;
    do {
      name = prefix + std::to_string(index++);
    } while (g.has_attr(name.c_str()));
    g.set_attr_tensor(name.c_str(), value.release());
    Node attr;
    {
      auto guard = g.inserting_before(n);
      attr = g.get_attr(name.c_str());
    }
    // Uses by other constants stay with the original until it is erased.
    for (Node u : n.users()) {
      if (!constants.nodes.count(u.get())) u.replace_input_with(n, attr);
    }
    changed = true;
  }
  return changed;
}

// Erase the constants left without users (they had some before).
bool erase_unused_constants(Graph& g, const std::vector<Node>& order,
                            const std::vector<size_t>& users_before) {
  bool changed = false;
  for (size_t i = order.size(); i-- > 0;) {
    Node n = order[i];
    if (users_before[i] > 0 && n.num_users() == 0 && !n.is_impure()) {
      g.erase_node(n);
      changed = true;
    }
  }
  return changed;
}

}  // namespace

bool const_fold(Graph& g, const fxp::Options& options) {
  std::string prefix = options.get_string("prefix");
  Constants constants = find_constants(g);
  std::vector<Node> frontier = constant_frontier(constants);
  std::vector<size_t> users_before;
  for (Node n : constants.order) users_before.push_back(n.num_users());
  const bool folded = fold_frontier(g, frontier, constants, prefix);
  const bool erased = erase_unused_constants(g, constants.order, users_before);
  return folded || erased;
}

}  // namespace fx_passes
