// A host application of the installed fx SDK (libfx_host.so, fx_sdk/host.h):
//   1. trace a C++ module (fx::Module) into a GraphModule;
//   2. run the "inference" pipeline on it with the first-party plugins of
//      the install (shape_prop, then fuse_linear, fuse_pointwise, ... from
//      libfx_shape_prop.so and libfx_inference.so);
//   3. plan the result for inference (fx::InferencePlan) and run it;
//   4. compare with the module run eagerly.
// Prints what it did; exits 1 when a step fails or the results differ.
//
//   host_app [PLUGIN_DIR]   (default: the install's lib/fx-sdk/plugins)
#include <torch/nn/modules/linear.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "fx_sdk/host.h"

namespace {

// forward(x) = sigmoid(fc2(relu(fc1(x))) + bias)
struct TinyMlp : fx::Module<TinyMlp> {
  TinyMlp() {
    fc1 = register_module("fc1", torch::nn::Linear(16, 32));
    fc2 = register_module("fc2", torch::nn::Linear(32, 8));
    bias = register_parameter("bias", at::rand({8}));
  }
  fx::Value forward(fx::Value x) {
    return fx::th::sigmoid(fc2(fx::th::relu(fc1(x))) + bias);
  }
  fx::Submodule<torch::nn::Linear> fc1;
  fx::Submodule<torch::nn::Linear> fc2;
  at::Tensor bias;
};

// Prints `code` (GraphModule::code(), torch.fx's gm.code) under `title`,
// without the blank lines torch.fx puts around it.
void print_code(const std::string& title, const std::string& code) {
  size_t begin = code.find_first_not_of('\n');
  size_t end = code.find_last_not_of(" \n");
  std::cout << title << ":\n"
            << (begin == std::string::npos
                    ? ""
                    : code.substr(begin, end + 1 - begin))
            << "\n";
}

// Runs `pipeline` on `gm` with the plugins of `plugin_dir`; false (with
// the error printed) when a plugin does not load, a pass does not resolve
// or the pipeline stops.
bool run_pipeline(fx::GraphModule& gm, const std::string& pipeline,
                  const std::string& plugin_dir, const at::Tensor& input) {
  absl::StatusOr<fx::host::PipelineSpec> spec =
      fx::host::parse_pipeline_text(pipeline);
  if (!spec.ok()) {
    std::cerr << "host_app: pipeline '" << pipeline << "': " << spec.status()
              << "\n";
    return false;
  }
  fx::host::PluginSources sources;
  sources.plugin_dirs = {plugin_dir};
  sources.default_dirs = false;
  fx::host::PassRegistry registry;
  absl::Status loaded = fx::host::load_plugins(*spec, sources, registry);
  if (!loaded.ok()) {
    std::cerr << "host_app: plugins of " << plugin_dir << ": " << loaded
              << "\n";
    return false;
  }
  absl::StatusOr<fx::host::PassManager> pm =
      fx::host::PassManager::create(registry, *std::move(spec));
  if (!pm.ok()) {
    std::cerr << "host_app: pipeline '" << pipeline << "': " << pm.status()
              << "\n";
    return false;
  }
  fx::host::GraphModuleTarget target(gm, {input});
  fx::host::PipelineReport report = pm->run(target);
  std::cout << "pipeline " << pm->text() << ":\n" << report.summary();
  if (!report.ok()) {
    std::cerr << "host_app: " << report.failure << "\n";
    return false;
  }
  return true;
}

int run(const std::string& plugin_dir) {
  std::cout << "libfx_host " << fx::host::library_version() << " (headers "
            << FX_HOST_VERSION_MAJOR << "." << FX_HOST_VERSION_MINOR << "."
            << FX_HOST_VERSION_PATCH << "), plugin API " << FX_API_VERSION
            << "\n";
  torch::manual_seed(0);
  TinyMlp model;
  model.eval();
  at::Tensor x = at::randn({4, 16});
  at::Tensor expected = model.forward(fx::Value(x)).tensor();

  std::shared_ptr<fx::GraphModule> gm = fx::symbolic_trace(model);
  print_code("traced", gm->code());
  if (!run_pipeline(*gm, "inference", plugin_dir, x)) return 1;
  print_code("after the pipeline", gm->code());

  std::unique_ptr<fx::InferencePlan> plan = fx::InferencePlan::build(*gm, {x});
  at::Tensor got = plan->run({x}).toTensor();
  double diff = (got - expected).abs().max().item<double>();
  std::printf("plan: %zu steps, %zu on oneDNN; max |plan - eager| = %.3g\n",
              plan->stats().steps, plan->stats().onednn_steps, diff);
  if (!at::allclose(got, expected, /*rtol=*/1e-5, /*atol=*/1e-6)) {
    std::cerr << "host_app: the plan's result differs from eager\n";
    return 1;
  }
  std::cout << "host_app: OK, the plan matches eager\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string plugin_dir =
      argc > 1 ? argv[1] : fx::host::installed_plugin_dir();
  if (plugin_dir.empty()) {
    std::cerr << "host_app: no plugin directory (libfx_host.so is not in an "
                 "installed SDK); usage: host_app [PLUGIN_DIR]\n";
    return 2;
  }
  try {
    return run(plugin_dir);
  } catch (const std::exception& e) {
    std::cerr << "host_app: " << e.what() << "\n";
    return 1;
  }
}
