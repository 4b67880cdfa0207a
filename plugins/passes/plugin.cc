// libfx_passes.so: the usual graph passes, built from plugin_api/include
// alone, under their names, options and descriptions (passes.h lists the
// files that hold them).
//
//   dce           torch.fx's Graph.eliminate_dead_code (impure nodes stay,
//                 and so do mutations and random draws nothing uses)
//   cse           common subexpression elimination
//   const_fold    get_attr-only subgraphs folded into new attributes
//   dot           the graph as Graphviz DOT text
//   split_module  torch.fx's split_module by a partition option
#include "fx/plugin_api.hpp"
#include "plugins/passes/passes.h"

FXP_PLUGIN(
    "fx_passes", "1.0",
    fxp::pass<fx_passes::dce>(
        "dce",
        "dead code elimination (torch.fx eliminate_dead_code; "
        "impure nodes, mutations and random draws stay)")
        .idempotent(),
    fxp::pass<fx_passes::cse>(
        "cse",
        "common subexpression elimination (torch.fx CSEPass): nodes "
        "with the same op, target, args and kwargs merge (impure, "
        "random and in-place ops excepted)")
        .idempotent(),
    fxp::pass<fx_passes::const_fold>(
        "const_fold",
        "folds get_attr-only subgraphs into new attributes "
        "read by get_attr")
        .option("prefix", FX_OPTION_STRING, "_folded_constant",
                "name prefix of the folded attributes")
        .idempotent(),
    fxp::pass<fx_passes::dot>(
        "dot", "writes the graph as Graphviz DOT (op, target, tensor_meta)")
        .option("path", FX_OPTION_STRING, "",
                "output file (stdout when empty or '-')")
        .option("name", FX_OPTION_STRING, "GraphModule", "the digraph's name")
        .option("color_by", FX_OPTION_STRING, "",
                "a node meta key holding an int (a partition index) that "
                "picks each node's colour; by opcode when empty"),
    fxp::pass<fx_passes::split_module>(
        "split_module",
        "splits the graph into submodules called in order (torch.fx "
        "split_module)")
        .option("partitions", FX_OPTION_STRING_LIST, "",
                "groups of node names joined by '+'; unlisted nodes join the "
                "group of the nearest listed node before them")
        .option("split_at", FX_OPTION_STRING_LIST, "",
                "nodes that start a new partition")
        .option("meta_key", FX_OPTION_STRING, "",
                "a node meta key whose value names the partition")
        .option("prefix", FX_OPTION_STRING, "submod_",
                "name prefix of the submodules"))
