#include "host/minimizer/pipeline_probe.h"

#include <memory>
#include <utility>

#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/support/strings.h"
#include "host/minimizer/graph_reducer.h"
#include "host/pipeline/pass_target.h"

namespace fx::host {

std::string failure_category(const PipelineReport& report) {
  for (const PassRecord& record : report.passes) {
    if (record.error.empty()) continue;
    return cat("pass '", record.pass,
               "': ", record.error.substr(0, record.error.find(':')));
  }
  return report.failure.empty() ? "" : report.failure;
}

std::string probe_pipeline(const PassManager& pm, const GraphFile& file) {
  GraphFile bare = copy_of(file);
  absl::StatusOr<std::shared_ptr<GraphModule>> module =
      load_graph_module(copy_of(file));
  if (module.ok()) {
    GraphModuleTarget target(**module);
    return failure_category(pm.run(target));
  }
  if (!file.weights.empty()) {
    return cat("the graph does not load: ",
               std::string(module.status().message()));
  }
  GraphFileTarget target(bare);
  return failure_category(pm.run(target));
}

}  // namespace fx::host
