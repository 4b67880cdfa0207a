// A pass pipeline as the minimizer's backend (minimizer.h): run b applies the
// pipeline to the subgraph, then runs the result on the host. This is how a
// vendor finds the op its lowering passes get wrong.
#ifndef HOST_MINIMIZER_PIPELINE_BACKEND_H_
#define HOST_MINIMIZER_PIPELINE_BACKEND_H_

#include "host/minimizer/minimizer.h"
#include "host/pipeline/pass_manager.h"

namespace fx::host {

// The subgraph is a GraphModuleTarget whose example inputs are its inputs
// (when they are all tensors). A pass that fails (the pipeline's report is
// not ok) makes the run fail with the report's failure. `pipeline` must
// outlive the returned function.
BackendRun pipeline_backend(const PassManager& pipeline);

}  // namespace fx::host

#endif  // HOST_MINIMIZER_PIPELINE_BACKEND_H_
