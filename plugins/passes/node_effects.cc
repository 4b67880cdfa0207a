#include "plugins/passes/node_effects.h"

#include <string_view>

namespace fx_passes {

using fxp::ArgView;
using fxp::Node;

bool mutates(const Node& n) {
  if (n.operator_effects() & FX_EFFECT_MUTATES) return true;
  std::string_view t = n.target();
  static const char* const kPythonMutations[] = {
      "operator.setitem",   "operator.delitem", "operator.iadd",
      "operator.isub",      "operator.imul",    "operator.itruediv",
      "operator.ifloordiv", "operator.imod",    "operator.ipow",
      "operator.iand",      "operator.ior",     "operator.ixor",
      "operator.ilshift",   "operator.irshift", "operator.imatmul",
      "operator.iconcat"};
  for (const char* m : kPythonMutations) {
    if (t == m) return true;
  }
  if (n.op() == FX_OP_CALL_METHOD && !t.empty() && t.back() == '_') {
    return true;
  }
  ArgView inplace = n.kwarg("inplace");
  return inplace && inplace.kind() == FX_ARG_BOOL && inplace.as_bool();
}

bool unsafe_to_share(const Node& n) {
  if (n.operator_effects() & FX_EFFECT_NONDETERMINISTIC) return true;
  if (mutates(n)) return true;
  for (const Node& user : n.users()) {
    ArgView first = user.num_args() > 0 ? user.arg(0) : ArgView();
    if (first && first.is_node() && first.node() == n && mutates(user)) {
      return true;
    }
  }
  return false;
}

}  // namespace fx_passes
