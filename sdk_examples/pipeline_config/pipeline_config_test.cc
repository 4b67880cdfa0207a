// The JSON pipeline config (shape_prop -> decompose -> quantize_weights ->
// dce -> shape_prop) read and run through the PassManager on resnet18 as
// torch.fx traces it: every pass runs and verifies, the final graph carries
// tensor_meta, and the output is PyTorch's int8 arithmetic
// (tests/plugins/quantize_golden.py) and close to float.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "fx_core/io/torch_save.h"
#include "fx_core/ir/node.h"
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

int run(const std::string& command) {
  return std::system((command + " > /dev/null 2>&1").c_str());
}

TEST(PipelineConfig, ShapePropDecomposeQuantizeOnResnet18) {
  if (run("/usr/bin/python3 -c 'import torch, torchvision'") != 0) {
    GTEST_SKIP() << "python3-torch / python3-torchvision are not installed";
  }
  std::string tmp = std::getenv("TEST_TMPDIR");
  std::string bundle = tmp + "/resnet18";
  ASSERT_EQ(run("/usr/bin/python3 " + runfile("tools/torchfx_export.py") +
                " --torchvision resnet18 -o " + bundle),
            0);
  ASSERT_EQ(
      run("/usr/bin/python3 " + runfile("tests/plugins/quantize_golden.py") +
          " " + runfile("tools/torchfx_import.py") + " " + bundle +
          " weights " + tmp + "/int8.pt"),
      0);

  // The config, and the plugins from its plugin_dirs.
  auto spec = fx::host::read_pipeline_config(runfile(
      "sdk_examples/pipeline_config/shape_prop_decompose_quantize.json"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  fx::host::PassRegistry registry;
  for (const std::string& dir : spec->plugin_dirs) {
    auto plugins = fx::host::load_plugin_dir(dir);
    ASSERT_TRUE(plugins.ok()) << plugins.status();
    for (const auto& p : *plugins) ASSERT_TRUE(registry.add(p).ok());
  }
  auto pm = fx::host::PassManager::create(registry, *spec);
  ASSERT_TRUE(pm.ok()) << pm.status();
  EXPECT_EQ(pm->text(),
            "shape_prop,decompose{rules=relu,batch_norm},"
            "quantize_weights{bits=8},dce,shape_prop");

  auto gm = fx::read_graph_module(bundle + "/graph.fx.json");
  ASSERT_TRUE(gm.ok()) << gm.status();
  auto inputs = fx::read_value_file(bundle + "/input.pt");
  auto expected = fx::read_value_file(bundle + "/expected.pt");
  auto int8 = fx::read_value_file(tmp + "/int8.pt");
  ASSERT_TRUE(inputs.ok() && expected.ok() && int8.ok());
  at::Tensor x = inputs->toListRef()[0].toTensor();

  fx::host::GraphModuleTarget target(**gm, {x});
  fx::host::PipelineReport report = pm->run(target);
  target.finish();
  ASSERT_TRUE(report.ok()) << report.failure;
  std::cout << report.summary();
  ASSERT_EQ(report.passes.size(), 5u);
  for (const auto& p : report.passes) {
    EXPECT_EQ(p.outcome, fx::host::PassRecord::Outcome::kRan) << p.pass;
  }
  for (const fx::Node* n : (*gm)->graph().nodes()) {
    if (n->op() == fx::Opcode::kOutput) continue;
    EXPECT_NE(n->meta_value("tensor_meta"), nullptr) << n->name();
    EXPECT_NE(n->target(), "torch.relu");
  }

  at::NoGradGuard no_grad;
  at::Tensor got = (*gm)->forward({x}).toTensor();
  at::Tensor fp = expected->toTensor();
  double vs_int8 = ((got - int8->toTensor()).norm() / fp.norm()).item<double>();
  double vs_float = ((got - fp).norm() / fp.norm()).item<double>();
  std::cout << "relative error vs PyTorch int8 " << vs_int8 << ", vs float "
            << vs_float << "\n";
  EXPECT_LT(vs_int8, 1e-4);
  EXPECT_LT(vs_float, 0.05);
}

}  // namespace
