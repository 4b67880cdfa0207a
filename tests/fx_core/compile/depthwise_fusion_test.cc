// The InferencePlan running a 1x1 fx_inference.conv2d and the depthwise
// 3x3 one reading its result as one oneDNN step (conv_choice.h,
// choose_depthwise_fusion; inference_program.h, Step::fuses): the result
// matches LibTorch's two convolutions, the depthwise call forwards it, a run
// whose operands leave the plan computes both nodes apart, and the policy
// and the graph decide when it fuses (a 1x1 result read twice never is).
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>
#include <torch/nn/module.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "fx_core/compile/conv_choice.h"
#include "fx_core/compile/inference_plan.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/op_registry.h"
#include "tests/testing/onednn_support.h"

namespace fx {
namespace {

// oneDNN 2.6 has its own kernel for the pair at these sizes on some
// AVX-512 CPUs (jit_1x1 with the depthwise convolution in its loop); where it
// has not, the tests that expect a fused step skip
// (testing::depthwise_fusion_skip_reason).
const std::vector<int64_t> kInput = {4, 16, 56, 56};

class DepthwiseFusion : public ::testing::Test {
 protected:
  void SetUp() override {
    set_conv_policy(ConvPolicy::kMeasure);
    set_depthwise_fusion_policy(FusionPolicy::kAlways);
    at::manual_seed(0);
    w1_ = param("w1", {48, 16, 1, 1}, 0.25);
    b1_ = param("b1", {48}, 0.1);
    w2_ = param("w2", {48, 1, 3, 3}, 0.3);
    b2_ = param("b2", {48}, 0.1);
  }
  void TearDown() override {
    set_depthwise_fusion_policy(FusionPolicy::kMeasure);
  }

  at::Tensor param(const std::string& name, at::IntArrayRef sizes,
                   double scale) {
    return root_.register_parameter(name, at::randn(sizes) * scale, false);
  }

  // x -> [`source`(x)] -> 1x1 conv + relu -> depthwise 3x3 / 2 + silu ->
  // output; with `also_output`, the 1x1 result is an output too.
  std::unique_ptr<GraphModule> net(const std::string& source = "",
                                   bool also_output = false) {
    auto g = std::make_unique<Graph>();
    Node* x = g->placeholder("x");
    if (!source.empty()) x = g->call_function(source, {x});
    Node* c1 = g->call_function("fx_inference.conv2d",
                                {x, g->get_attr("w1"), g->get_attr("b1")},
                                {{"activation", std::string("relu")}});
    Node* c2 = g->call_function("fx_inference.conv2d",
                                {c1, g->get_attr("w2"), g->get_attr("b2")},
                                {{"stride", int64_t{2}},
                                 {"padding", int64_t{1}},
                                 {"groups", int64_t{48}},
                                 {"activation", std::string("silu")}});
    if (also_output) {
      g->output(Argument::tuple({c2, c1}));
    } else {
      g->output(c2);
    }
    return std::make_unique<GraphModule>(root_, std::move(g));
  }

  at::Tensor reference(const at::Tensor& x) const {
    at::Tensor y = at::relu(at::conv2d(x, w1_, b1_));
    return at::silu(at::conv2d(y, w2_, b2_, 2, 1, 1, 48));
  }

  torch::nn::Module root_;
  at::Tensor w1_, b1_, w2_, b2_;
};

void expect_close(const at::Tensor& got, const at::Tensor& want) {
  EXPECT_TRUE(at::allclose(got, want, 1e-4, 1e-5))
      << "max |got - want| = " << (got - want).abs().max().item<double>();
}

TEST_F(DepthwiseFusion, OneStepMatchesLibTorch) {
  auto gm = net();
  c10::AutoGradMode no_grad(false);
  at::Tensor x = at::randn(kInput);
  auto plan = InferencePlan::build(*gm, {x});
  const InferencePlan::Stats s = plan->stats();
  if (const std::string why = testing::depthwise_fusion_skip_reason();
      !why.empty()) {
    EXPECT_EQ(s.depthwise_fusions, 0u);
    GTEST_SKIP() << why;
  }
  EXPECT_EQ(s.depthwise_fusions, 1u);
  EXPECT_EQ(s.onednn_steps, 1u);  // the depthwise call forwards its result
  EXPECT_EQ(s.direct_steps, 2u);
  for (int run = 0; run < 3; ++run) {
    at::Tensor in = at::randn(kInput);
    expect_close(plan->run({in}).toTensor(), reference(in));
  }
  EXPECT_EQ(plan->stats().direct_fallbacks, 0u);
  // channels_last inputs: the same plan's sizes, read as they are.
  at::Tensor nhwc =
      at::randn(kInput).contiguous(at::MemoryFormat::ChannelsLast);
  expect_close(plan->run({nhwc}).toTensor(), reference(nhwc));
}

// FX_PLAN_PROFILE's lines: the fused step's result is the depthwise
// call's, named; that call forwards it.
TEST_F(DepthwiseFusion, ProfileNamesTheFusedNode) {
  auto gm = net();
  c10::AutoGradMode no_grad(false);
  at::Tensor x = at::randn(kInput);
  setenv("FX_PLAN_PROFILE", "1", 1);
  ::testing::internal::CaptureStderr();
  size_t fusions = 0;
  {
    auto plan = InferencePlan::build(*gm, {x});
    plan->run({x});
    fusions = plan->stats().depthwise_fusions;
  }
  unsetenv("FX_PLAN_PROFILE");
  const std::string text = ::testing::internal::GetCapturedStderr();
  if (const std::string why = testing::depthwise_fusion_skip_reason();
      !why.empty()) {
    EXPECT_EQ(fusions, 0u);
    GTEST_SKIP() << why;
  }
  EXPECT_NE(text.find("onednn     conv2d (fx_inference.conv2d) -> "
                      "4x48x28x28 torch.float32 (with conv2d_1)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("forwarded  conv2d_1 (fx_inference.conv2d) -> "
                      "4x48x28x28 torch.float32"),
            std::string::npos)
      << text;
}

// A registry kernel whose result is narrower on some runs: there the fused
// step no longer fits its operand, so the 1x1 node computes its own result
// and the depthwise one runs on it (both by the registry), and the next run
// re-plans.
bool narrow_next = false;

TEST_F(DepthwiseFusion, OperandsThatLeaveThePlanRunBothNodes) {
  OpRegistry::global().add(Opcode::kCallFunction, "test.sometimes_narrow",
                           "input", [](OpArgs& a) -> c10::IValue {
                             at::Tensor x = a.tensor(0);
                             return narrow_next ? x.narrow(3, 0, 50)
                                                : x.clone();
                           });
  auto gm = net("test.sometimes_narrow");
  c10::AutoGradMode no_grad(false);
  at::Tensor x = at::randn(kInput);
  narrow_next = false;
  auto plan = InferencePlan::build(*gm, {x});
  if (const std::string why = testing::depthwise_fusion_skip_reason();
      !why.empty()) {
    EXPECT_EQ(plan->stats().depthwise_fusions, 0u);
    GTEST_SKIP() << why;
  }
  EXPECT_EQ(plan->stats().depthwise_fusions, 1u);
  for (bool narrow : {false, true, false, true, false}) {
    narrow_next = narrow;
    at::Tensor want = reference(narrow ? x.narrow(3, 0, 50) : x);
    expect_close(plan->run({x}).toTensor(), want);
  }
  EXPECT_EQ(plan->stats().direct_fallbacks, 2u);
  EXPECT_EQ(plan->stats().depthwise_fusions, 1u);
}

TEST_F(DepthwiseFusion, AResultReadTwiceIsNotFused) {
  auto gm = net("", /*also_output=*/true);
  c10::AutoGradMode no_grad(false);
  at::Tensor x = at::randn(kInput);
  auto plan = InferencePlan::build(*gm, {x});
  EXPECT_EQ(plan->stats().depthwise_fusions, 0u);
  EXPECT_EQ(plan->stats().onednn_steps, 2u);
  c10::IValue out = plan->run({x});
  expect_close(out.toTupleRef().elements()[0].toTensor(), reference(x));
}

TEST_F(DepthwiseFusion, PoliciesThatDoNotFuse) {
  auto gm = net();
  c10::AutoGradMode no_grad(false);
  at::Tensor x = at::randn(kInput);
  set_depthwise_fusion_policy(FusionPolicy::kNever);
  auto never = InferencePlan::build(*gm, {x});
  EXPECT_EQ(never->stats().depthwise_fusions, 0u);
  expect_close(never->run({x}).toTensor(), reference(x));
  // kMeasure measures only when the convolutions are measured too.
  set_depthwise_fusion_policy(FusionPolicy::kMeasure);
  set_conv_policy(ConvPolicy::kDirect);
  auto direct = InferencePlan::build(*gm, {x});
  set_conv_policy(ConvPolicy::kMeasure);
  EXPECT_EQ(direct->stats().depthwise_fusions, 0u);
  expect_close(direct->run({x}).toTensor(), reference(x));
}

TEST(DepthwiseFusionPolicy, FromTheEnvironment) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("FX_DEPTHWISE_FUSION", "sometimes", 1);
        try {
          depthwise_fusion_policy();
        } catch (const std::exception& e) {
          std::fprintf(stderr, "%s\n", e.what());
          std::exit(3);
        }
        std::exit(0);
      },
      ::testing::ExitedWithCode(3),
      "FX_DEPTHWISE_FUSION=sometimes: expected measure, always or never");
  EXPECT_EXIT(
      {
        setenv("FX_DEPTHWISE_FUSION", "never", 1);
        std::exit(depthwise_fusion_policy() == FusionPolicy::kNever ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace fx
