// What torch 1.13's retracing passes do to a graph besides their own edit:
// symbolic_trace (merge_matmul) and the Transformer (remove_dropout) record
// every node afresh, so each node is named again from its target in graph
// order and loses its type annotation. The plugin API cannot rename nodes,
// so a pass that retraces refuses a graph whose nodes the retrace would
// name otherwise.
#ifndef PLUGINS_OPTIMIZATION_RETRACE_H_
#define PLUGINS_OPTIMIZATION_RETRACE_H_

#include <string>
#include <unordered_set>

#include "fx/plugin_api.hpp"

namespace fx_optimization {

// Throws FX_FAILED_PRECONDITION, prefixed by `pass`, naming the first node
// (in graph order, skipping `removed`) that a retrace would give another
// name than its own. Checked on a scratch graph whose nodes the host names
// as it names a traced node.
void require_retrace_names(const fxp::Graph& g,
                           const std::unordered_set<FxNode*>& removed,
                           const std::string& pass);

}  // namespace fx_optimization

#endif  // PLUGINS_OPTIMIZATION_RETRACE_H_
