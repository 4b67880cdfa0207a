#include "host/minimizer/pipeline_backend.h"

#include <string>
#include <vector>

#include "fx_core/runtime/graph_module.h"
#include "host/pipeline/pass_target.h"

namespace fx::host {
namespace {

// The inputs as example inputs, or none when one is not a tensor.
std::vector<at::Tensor> example_inputs(const std::vector<c10::IValue>& in) {
  std::vector<at::Tensor> tensors;
  for (const c10::IValue& v : in) {
    if (!v.isTensor()) return {};
    tensors.push_back(v.toTensor());
  }
  return tensors;
}

}  // namespace

BackendRun pipeline_backend(const PassManager& pipeline) {
  return
      [&pipeline](GraphModule& subgraph, const std::vector<c10::IValue>& inputs)
          -> absl::StatusOr<c10::IValue> {
        GraphModuleTarget target(subgraph, example_inputs(inputs));
        PipelineReport report = pipeline.run(target);
        target.finish();
        if (!report.ok()) {
          return absl::FailedPreconditionError("the pipeline failed: " +
                                               report.failure);
        }
        return subgraph.forward(inputs);
      };
}

}  // namespace fx::host
