// The vendor plugin's extensions end to end: loaded by the host, its custom
// op runs eagerly (the kernel) and is recorded while tracing, its leaf rule
// keeps FusedBlock a call_module, shape_prop propagates shapes through both
// on meta tensors (the shape function), and the traced module computes what
// the eager model and ATen compute.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>

#include "fx_core/ir/argument.h"
#include "fx_core/ir/node.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/tracer/tracer.h"
#include "host/loader/plugin_loader.h"
#include "host/loader/plugin_tracer.h"
#include "host/pipeline/pass_manager.h"
#include "host/pipeline/pass_registry.h"
#include "host/pipeline/pass_target.h"
#include "host/pipeline/pipeline.h"
#include "sdk_examples/vendor_extension/vendor_model.h"

namespace vendor_example {
namespace {

const fx::host::PassRegistry& registry() {
  static fx::host::PassRegistry* r = [] {
    auto* out = new fx::host::PassRegistry();
    for (const char* path :
         {"sdk_examples/vendor_extension/libvendor_extension.so",
          "plugins/libfx_shape_prop.so"}) {
      auto plugin = fx::host::load_plugin(path);
      if (!plugin.ok()) throw std::runtime_error(plugin.status().ToString());
      absl::Status s = out->add(*plugin);
      if (!s.ok()) throw std::runtime_error(s.ToString());
    }
    register_vendor_modules();
    return out;
  }();
  return *r;
}

fx::host::PipelineReport run(fx::GraphModule& gm, const std::string& text) {
  auto pm = fx::host::PassManager::create(registry(),
                                          *fx::host::parse_pipeline_text(text));
  EXPECT_TRUE(pm.ok()) << pm.status();
  fx::host::GraphModuleTarget target(gm);
  fx::host::PipelineReport report = pm->run(target);
  target.finish();
  return report;
}

// ATen's computation of VendorNet.
at::Tensor reference(VendorNet& net, const at::Tensor& x) {
  at::Tensor y = 0.5 * at::gelu(net.fc->forward(x));
  at::Tensor block = 2.0 * at::gelu(net.block->linear->forward(y));
  return block + at::gelu(y);
}

class VendorExtension : public ::testing::Test {
 protected:
  void SetUp() override {
    registry();
    at::manual_seed(0);
    net_ = std::make_shared<VendorNet>();
    x_ = at::randn({2, 4});
  }
  std::shared_ptr<VendorNet> net_;
  at::Tensor x_;
};

TEST_F(VendorExtension, TheCustomOpRunsEagerlyThroughThePluginsKernel) {
  at::NoGradGuard no_grad;
  at::Tensor eager = net_->forward(fx::Value(x_)).tensor();
  EXPECT_TRUE(at::allclose(eager, reference(*net_, x_), 1e-5, 1e-6));
}

TEST_F(VendorExtension, ThePluginsLeafRuleKeepsTheBlockACallModule) {
  // The default tracer traces through FusedBlock (an fx::Module) ...
  auto traced_through = fx::symbolic_trace(*net_);
  size_t block_calls = 0;
  for (const fx::Node* n : traced_through->graph().nodes()) {
    block_calls += n->target() == "block";
  }
  EXPECT_EQ(block_calls, 0u);
  // ... the plugin's rule makes it a leaf.
  fx::host::PluginTracer tracer;
  auto gm = fx::symbolic_trace(*net_, {}, &tracer);
  EXPECT_EQ(gm->graph().str(),
            "graph():\n"
            "    %x : [num_users=1] = placeholder[target=x]\n"
            "    %fc : [num_users=1] = call_module[target=fc](args = (%x,), "
            "kwargs = {})\n"
            "    %fused_gelu : [num_users=2] = call_function[target=my_vendor."
            "fused_gelu](args = (%fc,), kwargs = {alpha: 0.5})\n"
            "    %block : [num_users=1] = call_module[target=block](args = "
            "(%fused_gelu,), kwargs = {})\n"
            "    %gelu : [num_users=1] = call_function[target=torch._C._nn."
            "gelu](args = (%fused_gelu,), kwargs = {})\n"
            "    %add : [num_users=1] = call_function[target=operator.add]"
            "(args = (%block, %gelu), kwargs = {})\n"
            "    return add");
  at::NoGradGuard no_grad;
  EXPECT_TRUE(
      at::allclose((*gm)(x_).toTensor(), reference(*net_, x_), 1e-5, 1e-6));
}

TEST_F(VendorExtension, ShapePropUsesTheShapeFunctionOnMetaTensors) {
  fx::host::PluginTracer tracer;
  auto gm = fx::symbolic_trace(*net_, {}, &tracer);
  fx::host::PipelineReport report = run(*gm, "shape_prop{shapes=16x4}");
  ASSERT_TRUE(report.ok()) << report.failure;
  for (const fx::Node* n : gm->graph().nodes()) {
    if (n->op() == fx::Opcode::kOutput || n->op() == fx::Opcode::kPlaceholder) {
      continue;
    }
    const fx::Argument* meta = n->meta_value("tensor_meta");
    ASSERT_NE(meta, nullptr) << n->name();
    std::vector<int64_t> shape;
    for (const fx::Argument& d : meta->find("shape")->elements()) {
      shape.push_back(d.as_int());
    }
    EXPECT_EQ(shape, (std::vector<int64_t>{16, 8})) << n->name();
    EXPECT_EQ(meta->find("dtype")->as_string(), "torch.float32");
  }
}

TEST_F(VendorExtension, ThePassFusesTorchFxsGeluIntoTheVendorOp) {
  fx::host::PluginTracer tracer;
  auto gm = fx::symbolic_trace(*net_, {}, &tracer);
  fx::host::PipelineReport report = run(*gm, "vendor_fuse_gelu");
  ASSERT_TRUE(report.ok()) << report.failure;
  size_t fused = 0, gelu = 0;
  for (const fx::Node* n : gm->graph().nodes()) {
    fused += n->target() == "my_vendor.fused_gelu";
    gelu += n->target() == "torch._C._nn.gelu";
  }
  EXPECT_EQ(fused, 2u);
  EXPECT_EQ(gelu, 0u);
  at::NoGradGuard no_grad;
  EXPECT_TRUE(
      at::allclose((*gm)(x_).toTensor(), reference(*net_, x_), 1e-5, 1e-6));
}

}  // namespace
}  // namespace vendor_example
