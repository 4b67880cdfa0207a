// Vendor extension points: custom ops (kernel + shape function) recorded as
// call_function nodes, and named tracer policies.
#include "fx_core/tracer/extensions.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>

#include "fx_core/tracer/tracer.h"
#include "tests/testing/graph_helpers.h"

namespace fx {
namespace {

const CustomOp& fused_bias_relu() {
  static const CustomOp op =
      register_custom_op({"vendor.fused_bias_relu", "input, bias",
                          [](OpArgs& a) -> c10::IValue {
                            return at::relu(a.tensor(0) + a.tensor(1));
                          },
                          [](const ShapeArgs& in) { return in.shapes[0]; }});
  return op;
}

struct UsesCustomOp : fx::Module<UsesCustomOp> {
  UsesCustomOp() { bias = register_parameter("bias", at::rand({4})); }
  Value forward(Value x) { return fused_bias_relu()(x, bias).sigmoid(); }
  at::Tensor bias;
};

TEST(CustomOp, RunsEagerlyAndIsOneCallFunctionWhenTraced) {
  UsesCustomOp m;
  at::Tensor x = at::randn({2, 4});
  at::Tensor eager = m.forward(x).tensor();
  EXPECT_TRUE(at::allclose(eager, at::sigmoid(at::relu(x + m.bias))));

  auto gm = symbolic_trace(m);
  auto calls =
      gm->graph().find_nodes(Opcode::kCallFunction, "vendor.fused_bias_relu");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0]->name(), "fused_bias_relu");
  EXPECT_TRUE(at::equal(gm->forward({x}).toTensor(), eager));
}

TEST(CustomOp, ShapeFunctionGivesTheNodeItsShape) {
  UsesCustomOp m;
  Tracer tracer;
  tracer.placeholder_shapes = {{"x", {2, 4}}};
  std::unique_ptr<Graph> g = tracer.trace(m);
  Node* call =
      g->find_nodes(Opcode::kCallFunction, "vendor.fused_bias_relu")[0];
  const Argument* shape = call->meta_value("shape");
  ASSERT_NE(shape, nullptr);
  EXPECT_EQ(*shape, Argument::list({Argument(2), Argument(4)}));
  EXPECT_NE(find_shape_function("vendor.fused_bias_relu"), nullptr);
}

// A vendor block: traceable, but registered as a leaf module kind so it is
// one call_module that GraphModules run.
struct FusedBlock : fx::Module<FusedBlock> {
  FusedBlock() { scale = register_parameter("scale", at::rand({4})); }
  Value forward(Value x) {
    Value y = x * scale;
    return y.sigmoid();
  }
  at::Tensor scale;
};
// A LibTorch-style vendor module with a typed forward.
struct ShiftImpl : torch::nn::Module {
  at::Tensor forward(at::Tensor x, double by) { return x + by; }
};
struct UsesVendorModules : fx::Module<UsesVendorModules> {
  UsesVendorModules() {
    block = register_module("block", std::make_shared<FusedBlock>());
    shift = register_module("shift", std::make_shared<ShiftImpl>());
  }
  Value forward(Value x) { return shift(block(x), 0.5); }
  Submodule<std::shared_ptr<FusedBlock>> block;
  Submodule<std::shared_ptr<ShiftImpl>> shift;
};

TEST(LeafModuleKind, VendorModulesAreCalledAndRun) {
  register_leaf_module_kind<FusedBlock>("vendor.nn.FusedBlock");
  register_leaf_module_kind<ShiftImpl>("vendor.nn.Shift", "input, by");
  UsesVendorModules m;
  auto gm = symbolic_trace(m);
  EXPECT_EQ(gm->graph().find_nodes(Opcode::kCallModule, "block").size(), 1u);
  EXPECT_EQ(gm->graph().find_nodes(Opcode::kCallModule, "shift").size(), 1u);
  EXPECT_TRUE(gm->check_executable().ok()) << gm->check_executable().message();
  at::Tensor x = at::rand({2, 4});
  EXPECT_TRUE(at::allclose(gm->forward({x}).toTensor(), m.forward(x).tensor()));
}

struct VendorLinearTracer : Tracer {
  bool is_leaf_module(const torch::nn::Module& m,
                      std::string_view name) const override {
    return name != "inner" && Tracer::is_leaf_module(m, name);
  }
};

struct Inner : fx::Module<Inner> {
  Value forward(Value x) { return x.relu(); }
};
struct Outer : fx::Module<Outer> {
  Outer() { inner = register_module("inner", std::make_shared<Inner>()); }
  Value forward(Value x) { return inner(x); }
  Submodule<std::shared_ptr<Inner>> inner;
};

TEST(TracerPolicy, NamedPoliciesMakeConfiguredTracers) {
  register_tracer_policy("vendor_no_math", [] {
    auto t = std::make_unique<VendorLinearTracer>();
    t->autowrap_modules.clear();
    return t;
  });
  std::unique_ptr<Tracer> t = make_tracer("vendor_no_math");
  EXPECT_TRUE(t->autowrap_modules.empty());
  Outer m;
  auto gm = symbolic_trace(m, {}, t.get());
  EXPECT_EQ(gm->graph().find_nodes(Opcode::kCallMethod, "relu").size(), 1u);
  auto policies = tracer_policies();
  EXPECT_NE(std::find(policies.begin(), policies.end(), "vendor_no_math"),
            policies.end());
  EXPECT_NE(std::find(policies.begin(), policies.end(), "default"),
            policies.end());
}

TEST(TracerPolicy, UnknownPolicyNamesTheKnownOnes) {
  std::string e = testing::error_of([] { make_tracer("nope"); });
  EXPECT_EQ(e.rfind("unknown tracer policy 'nope'; known: default", 0), 0u)
      << e;
}

}  // namespace
}  // namespace fx
