// The pass the C ABI benchmark loads at runtime: visit every node and its
// arguments, and rewrite every tenth call_function (a copy of it,
// Graph.node_copy, takes over its uses; the old one is erased). The
// same pass written against fx_core is in pass_benchmark.cc.
#include <cstdint>

#include "fx/plugin_api.hpp"

namespace {

int64_t visit(const fxp::ArgView& arg) {
  int64_t refs = 0;
  switch (arg.kind()) {
    case FX_ARG_NODE:
      return 1;
    case FX_ARG_LIST:
    case FX_ARG_TUPLE:
      for (size_t i = 0; i < arg.size(); ++i) refs += visit(arg[i]);
      return refs;
    default:
      return 0;
  }
}

bool rewrite_tenth(fxp::Graph& g, const fxp::Options& options) {
  const size_t every = static_cast<size_t>(options.get_int("every"));
  int64_t refs = 0;
  size_t calls = 0;
  for (fxp::Node n : g) {
    for (size_t i = 0, e = n.num_args(); i < e; ++i) refs += visit(n.arg(i));
    if (n.op() != FX_OP_CALL_FUNCTION || every == 0 || ++calls % every != 0) {
      continue;
    }
    auto guard = g.inserting_before(n);
    fxp::Node fresh = g.node_copy(n);
    n.replace_all_uses_with(fresh);
    g.erase_node(n);
  }
  return refs > 0;
}

}  // namespace

FXP_PLUGIN("bench_passes", "1.0",
           fxp::pass<rewrite_tenth>("rewrite_tenth",
                                    "visits every node, rewrites every tenth "
                                    "call_function")
               .option("every", FX_OPTION_INT, "10",
                       "rewrite every Nth call_function; 0: only visit"))
