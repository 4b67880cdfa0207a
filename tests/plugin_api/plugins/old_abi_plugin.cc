// A C++ plugin built with -D_GLIBCXX_USE_CXX11_ABI=0 (the old std::string
// layout): it works because nothing but C crosses the boundary. It uses
// std::string and std::vector freely on its own side.
#include <string>
#include <vector>

#include "fx/plugin_api.hpp"

namespace {

// Renames every call_function target listed in `from` to `to`.
bool retarget(fxp::Graph& g, const fxp::Options& options) {
  std::string to = options.get_string("to");
  bool changed = false;
  for (const std::string& from : options.get_list("from")) {
    for (fxp::Node n : g.find_nodes(FX_OP_CALL_FUNCTION, from.c_str())) {
      n.set_target(to.c_str());
      changed = true;
    }
  }
  return changed;
}

}  // namespace

FXP_PLUGIN("old_abi_plugin", "1.0",
           fxp::pass<retarget>("retarget", "renames call_function targets")
               .option("from", FX_OPTION_STRING_LIST, "operator.add",
                       "targets to rename")
               .option("to", FX_OPTION_STRING, "operator.sub", "new target"))
