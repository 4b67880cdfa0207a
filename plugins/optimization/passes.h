// The passes of libfx_optimization.so, each in its own file (named below),
// for the plugin's registration (plugin.cc), which gives their names,
// options and descriptions. Each returns whether it changed the graph;
// refusals are fxp::Error, with the graph left as it was.
#ifndef PLUGINS_OPTIMIZATION_PASSES_H_
#define PLUGINS_OPTIMIZATION_PASSES_H_

#include <functional>
#include <string>
#include <vector>

#include "fx/plugin_api.hpp"

namespace fx_optimization {

// torch 1.13's torch.fx.experimental.optimization.fuse: eval-mode
// BatchNorm folded into the convolution before it (fuse.cc).
bool fuse(fxp::Graph& g, const fxp::Options& options);

// torch 1.13's torch.fx.experimental.optimization.remove_dropout, with the
// names and types its retrace gives (remove_dropout.cc).
bool remove_dropout(fxp::Graph& g, const fxp::Options& options);

// torch 1.13's torch.fx.experimental.merge_matmul.merge_matmul
// (merge_matmul.cc).
bool merge_matmul(fxp::Graph& g, const fxp::Options& options);

// torch 1.13's torch.fx.experimental.optimization.extract_subgraph, the
// graph turned into the subgraph's (extract_subgraph.cc).
bool extract_subgraph(fxp::Graph& g, const fxp::Options& options);

// torch 1.13's torch.fx.passes.graph_manipulation: replace_target_nodes_with
// (replace_target_nodes_with.cc) and get_size_of_all_nodes
// (get_size_of_all_nodes.cc).
bool replace_target_nodes_with(fxp::Graph& g, const fxp::Options& options);
bool get_size_of_all_nodes(fxp::Graph& g, const fxp::Options& options);

// torch 1.13's torch.fx.passes.split_utils.split_by_tags, the graph turned
// into the split's main graph (split_by_tags.cc).
bool split_by_tags(fxp::Graph& g, const fxp::Options& options);

// The split itself, for the passes that tag (splitter): `tag_of` gives each
// call node's tag (it throws to refuse), `meta_key` is where the copies
// keep it. Refuses, before anything changes, what split_by_tags refuses.
using TagOf = std::function<std::string(const fxp::Node&)>;
void split_graph_by_tags(fxp::Graph& g, const std::vector<std::string>& tags,
                         const TagOf& tag_of, const std::string& meta_key);

// torch 1.13's torch.fx.passes.param_fetch.lift_lowering_attrs_to_nodes
// (param_fetch.cc).
bool param_fetch(fxp::Graph& g, const fxp::Options& options);

// torch 1.13's torch.fx.passes.reinplace.reinplace (reinplace.cc).
bool reinplace(fxp::Graph& g, const fxp::Options& options);

// torch 1.13's torch.fx.experimental.graph_gradual_typechecker.
// GraphTypeChecker.type_check (gradual_typecheck.cc).
bool gradual_typecheck(fxp::Graph& g, const fxp::Options& options);
// torch 1.13's torch.fx.experimental.unify_refinements.
// infer_symbolic_types_single_pass: Refine, unify_eq, substitute_all_types
// (unify_refinements.cc).
bool unify_refinements(fxp::Graph& g, const fxp::Options& options);

// torch 1.13's torch.fx.passes.splitter_base._SplitterBase (splitter.cc).
bool splitter(fxp::Graph& g, const fxp::Options& options);

// torch 1.13's torch.fx.experimental.normalize.NormalizeArgs
// (normalize.cc).
bool normalize_args(fxp::Graph& g, const fxp::Options& options);

// torch 1.13's torch.fx.experimental.schema_type_annotation.
// AnnotateTypesWithSchema and torch.fx.experimental.normalize.
// NormalizeOperators (annotate_types.cc).
bool annotate_types_with_schema(fxp::Graph& g, const fxp::Options& options);
bool normalize_operators(fxp::Graph& g, const fxp::Options& options);

// torch 1.13's torch.fx.experimental.accelerator_partitioner.Partitioner
// (accelerator_partition.cc).
bool accelerator_partition(fxp::Graph& g, const fxp::Options& options);

}  // namespace fx_optimization

#endif  // PLUGINS_OPTIMIZATION_PASSES_H_
