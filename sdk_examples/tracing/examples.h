// The tracing examples by name, for the trace_examples binary, the tests and
// `fx demo`.
#ifndef SDK_EXAMPLES_TRACING_EXAMPLES_H_
#define SDK_EXAMPLES_TRACING_EXAMPLES_H_

#include <memory>
#include <string>
#include <vector>

#include "fx_core/runtime/graph_module.h"
#include "fx_core/tracer/tracer.h"

namespace fx::examples {

// seed_mymodule, seed_topk, seed_static_flow, seed_leaf, seed_dropout,
// seed_dropout_functional, seed_wrap, resnet18, mobilenet_v2.
std::vector<std::string> example_names();

// A new instance of example `name` (the module torch.fx's twin traces:
// seed_static_flow with do_activation=True; torchvision models in eval
// mode). Throws FxError for an unknown name.
std::shared_ptr<TraceableModule> make_example(const std::string& name);

// fx::symbolic_trace of a new instance of example `name`.
std::shared_ptr<GraphModule> trace_example(const std::string& name);

// The seed docs' MyModule (a fresh instance, weights from at::rand) and its
// trace, for `fx demo`.
struct TracedMyModule {
  std::shared_ptr<TraceableModule> module;
  std::shared_ptr<GraphModule> graph_module;
};
TracedMyModule trace_seed_mymodule();

}  // namespace fx::examples

#endif  // SDK_EXAMPLES_TRACING_EXAMPLES_H_
