// The plugin, loaded by the host and run through the pass manager on the
// seed docs' MyModule (`x + param` -> `x * param`), against Python torch.fx
// running the docs' transform on the same bundle: gm.code byte for byte and
// the outputs.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "fx_core/io/torch_save.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "host/loader/plugin_loader.h"
#include "host/pipeline/pass_manager.h"
#include "host/pipeline/pass_registry.h"
#include "host/pipeline/pass_target.h"
#include "host/pipeline/pipeline.h"

namespace {

std::string runfile(const std::string& path) {
  return std::string(std::getenv("TEST_SRCDIR")) + "/fx_sdk/" + path;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(ReplaceAddWithMul, TheLoadedPluginDoesWhatTorchFxsTransformDoes) {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "python3-torch is not installed at /usr/bin/python3";
  }
  std::string bundle = std::string(std::getenv("TEST_SRCDIR")) +
                       "/shared/reference/seed_mymodule";
  std::string golden = std::string(std::getenv("TEST_TMPDIR")) + "/golden";
  ASSERT_EQ(
      std::system(("/usr/bin/python3 " +
                   runfile("sdk_examples/replace_add_with_mul/golden.py") +
                   " " + runfile("tools/torchfx_import.py") + " " + bundle +
                   " " + golden)
                      .c_str()),
      0);

  // Load the plugin and run its pass on the bundle's module.
  auto plugin = fx::host::load_plugin(
      "sdk_examples/replace_add_with_mul/libreplace_add_with_mul.so");
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  fx::host::PassRegistry registry;
  ASSERT_TRUE(registry.add(*plugin).ok());
  auto spec = fx::host::parse_pipeline_text("replace_add_with_mul");
  ASSERT_TRUE(spec.ok());
  auto pm = fx::host::PassManager::create(registry, *spec);
  ASSERT_TRUE(pm.ok()) << pm.status();
  auto gm = fx::read_graph_module(bundle + "/graph.fx.json");
  ASSERT_TRUE(gm.ok()) << gm.status();
  fx::host::GraphModuleTarget target(**gm);
  fx::host::PipelineReport report = pm->run(target);
  target.finish();  // recompiles
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_TRUE(report.passes[0].changed);

  EXPECT_EQ((*gm)->code(), read_file(golden + "/code.py"));
  auto inputs = fx::read_value_file(bundle + "/input.pt");
  auto want = fx::read_value_file(golden + "/output.pt");
  ASSERT_TRUE(inputs.ok() && want.ok());
  at::Tensor got = (*gm)->forward(inputs->toListRef().vec()).toTensor();
  EXPECT_TRUE(at::allclose(got, want->toTensor(), 1e-5, 1e-6));
}

}  // namespace
