// The conv/batch-norm fusion plugin on torchvision's resnet18 as torch.fx
// traces it (exported with tools/torchfx_export.py): the pass manager loads
// the plugin, the graph loses one node per fused pair, and the module
// computes the same outputs as before (and as Python eager).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <string>

#include "fx_core/io/torch_save.h"
#include "fx_core/ir/node.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "host/loader/plugin_loader.h"
#include "host/pipeline/pass_manager.h"

namespace fx {
namespace {

size_t count(const Graph& g, Opcode op) {
  size_t n = 0;
  for (const Node* node : g.nodes()) n += node->op() == op ? 1 : 0;
  return n;
}

TEST(ConvBnFusion, Resnet18KeepsItsOutputsWithTwentyNodesLess) {
  if (std::system("/usr/bin/python3 -c 'import torch, torchvision' "
                  ">/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "python3-torch / python3-torchvision are not installed";
  }
  std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/resnet18";
  std::string command =
      "/usr/bin/python3 tools/torchfx_export.py --torchvision resnet18 "
      "--input-shape 2,3,64,64 -o " +
      dir + " > " + dir + ".log 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0)
      << "export failed, see " << dir << ".log";
  auto gm = read_graph_module(dir + "/graph.fx.json");
  ASSERT_TRUE(gm.ok()) << gm.status();
  (*gm)->eval();
  auto inputs = read_value_file(dir + "/input.pt");
  ASSERT_TRUE(inputs.ok());
  at::Tensor x = inputs->toListRef()[0].toTensor();
  auto expected = read_value_file(dir + "/expected.pt");
  ASSERT_TRUE(expected.ok());
  torch::NoGradGuard no_grad;
  at::Tensor before = (*gm)->forward({x}).toTensor();
  ASSERT_TRUE(at::allclose(before, expected->toTensor(), 1e-4, 1e-5));
  size_t nodes = (*gm)->graph().size();
  size_t modules = count((*gm)->graph(), Opcode::kCallModule);

  host::PassRegistry registry;
  auto plugin =
      host::load_plugin("sdk_examples/conv_bn_fusion/libconv_bn_fusion.so");
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  ASSERT_TRUE(registry.add(*plugin).ok());
  auto pm = host::PassManager::create(
      registry, *host::parse_pipeline_text("fuse_conv_bn"));
  ASSERT_TRUE(pm.ok()) << pm.status();
  host::GraphModuleTarget target(**gm);
  host::PipelineReport report = pm->run(target);
  ASSERT_TRUE(report.ok()) << report.failure;

  // resnet18 has 20 conv + batch norm pairs.
  EXPECT_EQ((*gm)->graph().size(), nodes - 20);
  EXPECT_EQ(count((*gm)->graph(), Opcode::kCallModule), modules - 20);
  at::Tensor after = (*gm)->forward({x}).toTensor();
  EXPECT_TRUE(at::allclose(after, before, 1e-4, 1e-4))
      << "max |difference| " << (after - before).abs().max().item<double>();
  EXPECT_TRUE(at::allclose(after, expected->toTensor(), 1e-4, 1e-4));
}

}  // namespace
}  // namespace fx
