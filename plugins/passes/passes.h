// The passes of libfx_passes.so, one a file (dce.cc, cse.cc, const_fold.cc,
// dot.cc, split_module.cc), for the plugin's registration (plugin.cc),
// which gives their names, options and descriptions. Each takes the graph
// and its options as the C ABI hands them and returns whether it changed
// the graph; refusals are fxp::Error.
#ifndef PLUGINS_PASSES_PASSES_H_
#define PLUGINS_PASSES_PASSES_H_

#include "fx/plugin_api.hpp"

namespace fx_passes {

// torch.fx's Graph.eliminate_dead_code, except that a node a program
// observes stays even when nothing uses its value (dce.cc).
bool dce(fxp::Graph& g, const fxp::Options& options);

// Common subexpression elimination as torch.fx's CSEPass (cse.cc).
bool cse(fxp::Graph& g, const fxp::Options& options);

// get_attr-only subgraphs folded into new attributes (const_fold.cc).
bool const_fold(fxp::Graph& g, const fxp::Options& options);

// The graph as Graphviz DOT text; never changes the graph (dot.cc).
bool dot(fxp::Graph& g, const fxp::Options& options);

// torch.fx's split_module by a partition option (split_module.cc).
bool split_module(fxp::Graph& g, const fxp::Options& options);

}  // namespace fx_passes

#endif  // PLUGINS_PASSES_PASSES_H_
