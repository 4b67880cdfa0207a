#include "fx_core/runtime/graph_executor.h"

#include <atomic>

#include "fx_core/support/error.h"

namespace fx {
namespace {

std::atomic<GraphExecutorFactory>& installed_factory() {
  static std::atomic<GraphExecutorFactory> factory{nullptr};
  return factory;
}

}  // namespace

void set_graph_executor_factory(GraphExecutorFactory factory) {
  installed_factory().store(factory, std::memory_order_release);
}

std::unique_ptr<GraphExecutor> compile_graph_executor(
    const Graph& graph, torch::nn::Module& root,
    const ForeignTargets* foreign) {
  GraphExecutorFactory factory =
      installed_factory().load(std::memory_order_acquire);
  if (factory == nullptr) {
    throw FxError(
        "GraphModule: no graph executor is linked into this program, so no "
        "graph can run (depend on //fx_core/compile:execution_plan, which "
        "installs ExecutionPlan)");
  }
  return factory(graph, root, foreign);
}

}  // namespace fx
