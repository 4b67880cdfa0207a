#include "tools/demo.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <memory>

#include "fx_core/cppgen/cpp_codegen.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/interpreter.h"
#include "fx_core/tracer/tracer.h"
#include "host/loader/plugin_discovery.h"
#include "host/pipeline/pass_manager.h"
#include "host/pipeline/pass_registry.h"
#include "host/pipeline/pipeline.h"
#include "sdk_examples/tracing/seed_examples.h"

namespace fx::tools {
namespace {

// The pipeline the demo runs: plugins loaded at runtime from the
// first-party plugin directory. shape_prop records tensor_meta; decompose
// rewrites the Linear module into matmul + add on its parameters; cse and
// dce tidy up.
constexpr const char* kPipeline =
    "shape_prop{shapes=3x4},decompose{rules=linear},cse,dce";

double max_diff(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

// Loads every first-party plugin; false (with a message) when none is found.
bool load_first_party(host::PassRegistry& registry, std::ostream& err) {
  absl::Status loaded = host::load_plugins(host::PluginSources{}, registry);
  if (!loaded.ok()) {
    err << "fx demo: " << loaded.message() << "\n";
    return false;
  }
  if (registry.plugins().empty()) {
    err << "fx demo: no first-party plugins found (run it with "
           "`bazel run //tools:fx -- demo`, or set FX_PLUGIN_PATH)\n";
    return false;
  }
  return true;
}

// 1. The traced graph as torch.fx shows it: graph, table, code, and C++.
void print_traced(GraphModule& gm, std::ostream& out) {
  out << "# The seed docs' MyModule, traced with fx::symbolic_trace "
         "(print(gm.graph)):\n\n"
      << gm.graph().str() << "\n\n# gm.graph.print_tabular():\n\n"
      << gm.graph().tabular() << "\n# gm.code:\n"
      << gm.code() << "\n# The same graph as C++ (fx code --lang=cpp):\n\n"
      << gen_cpp_code(gm.graph(), {{"linear", "torch.nn.Linear"}}, "demo");
}

// 2. The traced module computes what the eager module computes (`eager`).
bool check_traced(GraphModule& gm, const at::Tensor& x, const at::Tensor& eager,
                  std::ostream& out, std::ostream& err) {
  at::Tensor compiled = gm(x).toTensor();
  Interpreter interpreter(gm);
  at::Tensor interpreted = interpreter.run({x}).toTensor();
  double diff =
      std::max(max_diff(compiled, eager), max_diff(interpreted, eager));
  out << "\n# Run on x = torch.rand(3, 4):\n\n"
      << "eager MyModule:      " << eager.sizes() << "\n"
      << "GraphModule.forward: " << compiled.sizes() << "\n"
      << "Interpreter.run:     " << interpreted.sizes() << "\n"
      << "max |difference| against eager: " << diff << "\n";
  if (diff != 0) {
    err << "fx demo: the graph's output differs from eager MyModule\n";
    return false;
  }
  return true;
}

// 3. A pipeline of passes from plugins loaded at runtime, run on `gm`.
bool run_pipeline(GraphModule& gm, std::ostream& out, std::ostream& err) {
  host::PassRegistry registry;
  if (!load_first_party(registry, err)) return false;
  out << "\n# Plugins loaded at runtime:\n\n";
  for (const auto& plugin : registry.plugins()) {
    out << "  " << plugin->name() << " " << plugin->version() << " ("
        << plugin->info().num_passes << " passes)\n";
  }
  auto spec = host::parse_pipeline_text(kPipeline);
  auto pm = host::PassManager::create(registry, *std::move(spec));
  if (!pm.ok()) {
    err << "fx demo: " << pm.status().message() << "\n";
    return false;
  }
  host::GraphModuleTarget target(gm);
  host::PipelineReport report = pm->run(target);
  out << "\n# fx run --pipeline '" << kPipeline << "':\n\n" << report.summary();
  if (!report.ok()) {
    err << "fx demo: " << report.failure << "\n";
    return false;
  }
  return true;
}

}  // namespace

int run_demo(std::ostream& out, std::ostream& err) {
  at::manual_seed(0);
  examples::MyModule root;
  std::shared_ptr<GraphModule> traced = symbolic_trace(root);
  GraphModule& gm = *traced;
  print_traced(gm, out);
  at::Tensor x = at::rand({3, 4});
  at::Tensor eager = root.forward(Value(x)).tensor();
  if (!check_traced(gm, x, eager, out, err)) return 1;
  if (!run_pipeline(gm, out, err)) return 1;
  // 4. After the pipeline, the module still computes the same, to rounding.
  at::Tensor after = gm(x).toTensor();
  double pipeline_diff = max_diff(after, eager);
  out << "\n# The graph after the pipeline:\n\n"
      << gm.graph().str() << "\n\n"
      << "max |difference| against eager after the pipeline: " << pipeline_diff
      << "\n";
  if (!at::allclose(after, eager, 1e-5, 1e-6)) {
    err << "fx demo: the pipeline changed what the module computes\n";
    return 1;
  }
  out << "The traced GraphModule and the Interpreter compute exactly what "
         "eager MyModule computes; after the plugin pipeline it agrees to "
         "rounding (allclose).\n";
  return 0;
}

}  // namespace fx::tools
