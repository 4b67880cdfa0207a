// A pass pipeline as the minimizer's backend (minimizer.h): run b applies the
// pipeline to the subgraph, then runs the result on the host. This is how a
// vendor finds the op its lowering passes get wrong.
#ifndef PLUGIN_API_PIPELINE_PIPELINE_BACKEND_H_
#define PLUGIN_API_PIPELINE_PIPELINE_BACKEND_H_

#include "plugin_api/pipeline/minimizer.h"
#include "plugin_api/pipeline/pass_manager.h"

namespace fx::host {

// The subgraph is a GraphModuleTarget whose example inputs are its inputs
// (when they are all tensors). A pass that fails (the pipeline's report is
// not ok) makes the run fail with the report's failure. `pipeline` must
// outlive the returned function.
BackendRun pipeline_backend(const PassManager& pipeline);

}  // namespace fx::host

#endif  // PLUGIN_API_PIPELINE_PIPELINE_BACKEND_H_
