// Named pipelines: one word for a pass list and the engine that runs its
// result, as `opt -O2` names LLVM's pipeline. Defined once, here; every
// place that reads pipeline text (fx run, fx exec, fx dot, fx reduce,
// fx minimize, a JSON config's "pipeline", fx_sdk.run_pipeline,
// fx_sdk.compile) expands a name through parse_pipeline_text (pipeline.h).
//
//   O1         cleanups that never change a number: dce, cse
//   O2         O1, then shape_prop and the inference plugin's folding and
//              fusions (within their declared tolerances)
//   inference  the InferencePlan's fast path: shape_prop, fold_bn,
//              fuse_conv, fuse_linear, fuse_matmul, fuse_pointwise
//
// A name stands for its passes wherever a pass may stand in the text
// ("O1,dot" is dce, cse, dot), takes no options, and wins over a plugin's
// pass of the same name. Every pass of the table is a first-party one; the
// table says which plugin provides it, so a host that lacks it can say
// which file to load. No LibTorch, no JSON: a table and lookups.
#ifndef HOST_PIPELINE_NAMED_PIPELINES_H_
#define HOST_PIPELINE_NAMED_PIPELINES_H_

#include <string>
#include <string_view>
#include <vector>

namespace fx::host {

struct NamedPipeline {
  std::string_view name;
  std::string_view description;  // one line
  std::string_view passes;       // pipeline text, without names
  std::string_view engine;       // "graph_module" or "inference_plan"
};

// Every named pipeline, in the order `fx pipelines` lists them.
const std::vector<NamedPipeline>& named_pipelines();

// The named pipeline called `name` exactly, or nullptr.
const NamedPipeline* find_named_pipeline(std::string_view name);

// Whether `pipeline`'s passes include `pass`.
bool uses_pass(const NamedPipeline& pipeline, std::string_view pass);

// "O1, O2, inference": the names, for messages.
std::string named_pipeline_names();

// The first-party plugin providing `pass` of a named pipeline, as
// "fx_inference (libfx_inference.so)"; empty for a pass no table entry
// uses.
std::string first_party_plugin_of(std::string_view pass);

}  // namespace fx::host

#endif  // HOST_PIPELINE_NAMED_PIPELINES_H_
