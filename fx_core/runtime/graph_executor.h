// fx::GraphExecutor: what runs a GraphModule's graph, as the compiler layer
// (fx_core/compile) provides it.
//
// GraphModule::recompile() turns its Graph into an executable form next to
// the Python code, and forward() runs that form. The runtime does not know
// how: it asks the process's GraphExecutorFactory, which the compiler layer
// installs when it is linked in (fx_core/compile/execution_plan.cc installs
// ExecutionPlan::compile, so depending on //fx_core/compile:execution_plan is
// what makes a GraphModule runnable). This keeps every arrow in fx_core
// pointing down, as Graph reaches its module only through GraphOwner.
//
// A program with no factory installed still builds, prints and saves
// GraphModules; check_executable() and forward() then fail with an FxError
// naming the missing dependency.
#ifndef FX_CORE_RUNTIME_GRAPH_EXECUTOR_H_
#define FX_CORE_RUNTIME_GRAPH_EXECUTOR_H_

#include <ATen/core/ivalue.h>

#include <memory>
#include <vector>

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace fx {

class ForeignTargets;
class Graph;

class GraphExecutor {
 public:
  virtual ~GraphExecutor() = default;
  // Runs the graph on positional inputs (one per placeholder; a `*args`
  // placeholder takes the rest; defaults fill in missing ones) and returns
  // the output node's value. Errors are FxError naming the node that failed.
  // May be called from several threads at once.
  virtual c10::IValue run(std::vector<c10::IValue> inputs) const = 0;
};

// Compiles `graph` against `root` (the module owning its attributes and
// submodules) and `foreign` (its own targets, may be null). Throws FxError
// naming the node on anything that could not run.
using GraphExecutorFactory = std::unique_ptr<GraphExecutor> (*)(
    const Graph& graph, torch::nn::Module& root, const ForeignTargets* foreign);

// Installs the factory every GraphModule compiles with from then on (the
// compiler layer does so during static initialization). Thread-safe; the
// last one installed wins.
void set_graph_executor_factory(GraphExecutorFactory factory);

// Compiles with the installed factory; throws FxError when none is installed.
std::unique_ptr<GraphExecutor> compile_graph_executor(
    const Graph& graph, torch::nn::Module& root, const ForeignTargets* foreign);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_GRAPH_EXECUTOR_H_
