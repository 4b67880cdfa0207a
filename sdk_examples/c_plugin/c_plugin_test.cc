// The plain-C plugin loaded by the host and run through the pass manager on
// a model traced by torch.fx, against torch.fx's Graph API applying the same
// rules (model.py): the graph text and the outputs.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

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

TEST(CPlugin, SimplifiesAsTorchFxsGraphApiDoes) {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "python3-torch is not installed at /usr/bin/python3";
  }
  std::string tmp = std::getenv("TEST_TMPDIR");
  std::string model = runfile("sdk_examples/c_plugin/model.py");
  ASSERT_EQ(
      std::system(("/usr/bin/python3 " + model + " export " +
                   runfile("tools/torchfx_export.py") + " " + tmp + "/bundle")
                      .c_str()),
      0);
  ASSERT_EQ(std::system(("/usr/bin/python3 " + model + " golden " +
                         runfile("tools/torchfx_import.py") + " " + tmp +
                         "/bundle " + tmp + "/golden")
                            .c_str()),
            0);

  auto plugin = fx::host::load_plugin("sdk_examples/c_plugin/libc_simplify.so");
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  fx::host::PassRegistry registry;
  ASSERT_TRUE(registry.add(*plugin).ok());
  auto pm = fx::host::PassManager::create(
      registry, *fx::host::parse_pipeline_text("c_simplify"));
  ASSERT_TRUE(pm.ok()) << pm.status();
  auto gm = fx::read_graph_module(tmp + "/bundle/graph.fx.json");
  ASSERT_TRUE(gm.ok()) << gm.status();
  size_t before = (*gm)->graph().size();
  fx::host::GraphModuleTarget target(**gm);
  fx::host::PipelineReport report = pm->run(target);
  target.finish();
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_EQ((*gm)->graph().size(), before - 5);  // five identities

  EXPECT_EQ((*gm)->graph().str(), read_file(tmp + "/golden/graph.txt"));
  auto inputs = fx::read_value_file(tmp + "/bundle/input.pt");
  auto want = fx::read_value_file(tmp + "/golden/output.pt");
  ASSERT_TRUE(inputs.ok() && want.ok());
  at::Tensor got = (*gm)->forward(inputs->toListRef().vec()).toTensor();
  EXPECT_TRUE(at::allclose(got, want->toTensor()));
}

}  // namespace
