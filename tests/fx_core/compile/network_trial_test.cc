// The InferencePlan trying a convolution's measured kernel against oneDNN's
// first choice inside the network (conv_choice.h, ConvTrial;
// inference_program_trial.cc): the step keeps the faster there, the plan
// computes LibTorch's result whichever it keeps, the trial's runs stay out
// of the profile, a dynamic plan keeps one packed copy of the weights, and
// FX_NETWORK_TRIAL switches the trial off; a linear tries PanelLinear
// against oneDNN.
//
// The measured kernel is pinned with record_conv_decision, whatever this
// machine's timing would choose: oneDNN's Winograd F(4x4, 3x3) on 512
// channels at 7x7, batch 1, whose 4x4 tiles cover 8x8 outputs for 7x7 and
// whose transformed weights are 4x the direct ones (38 MB). It took 1.7x
// the direct kernel's time with the weights warm on an AMD EPYC
// (BENCHMARKS.md, "Both Winograd kernels"), so the trial keeps the first
// choice for it even in this one-layer network, where the weights stay in
// the caches from run to run.
#include "fx_core/compile/network_trial.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <torch/nn/module.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fx_core/compile/conv_choice.h"
#include "fx_core/compile/inference_plan.h"
#include "fx_core/compile/linear_choice.h"
#include "fx_core/compile/onednn_conv.h"
#include "fx_core/compile/panel_linear.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/support/error.h"
#include "tests/testing/onednn_support.h"

namespace fx {
namespace {

const std::vector<int64_t> kInput = {1, 512, 7, 7};

FusedConvParams same_3x3() {
  FusedConvParams p;
  p.stride = {1, 1};
  p.padding = {1, 1};
  p.dilation = {1, 1};
  p.activation = "relu";
  return p;
}

class NetworkTrial : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = testing::winograd_skip_reason(); !why.empty()) {
      GTEST_SKIP() << why;
    }
    set_conv_policy(ConvPolicy::kMeasure);
    set_network_trial(true);
    at::manual_seed(0);
    w_ = root_.register_parameter("w", at::randn({512, 512, 3, 3}) * 0.015,
                                  false);
    b_ = root_.register_parameter("b", at::randn({512}) * 0.1, false);
  }
  void TearDown() override { set_network_trial(true); }

  // Pins the measured kernel of the graph's convolution: oneDNN's
  // Winograd kernel `name` ("jit_wino_4x3", ...) when it lists one, else
  // false.
  bool pin_winograd(const std::string& name) {
    for (const std::string& impl : OnednnConv::implementations(
             w_, b_, same_3x3(), kInput, ConvAlgorithm::kWinograd)) {
      if (impl.find(name) == 0) {
        record_conv_decision(w_, b_, same_3x3(), kInput,
                             ConvAlgorithm::kWinograd, impl);
        return true;
      }
    }
    return false;
  }

  // x -> 3x3 conv + relu -> output.
  std::unique_ptr<GraphModule> net() {
    auto g = std::make_unique<Graph>();
    Node* x = g->placeholder("x");
    Node* c = g->call_function(
        "fx_inference.conv2d", {x, g->get_attr("w"), g->get_attr("b")},
        {{"padding", int64_t{1}}, {"activation", std::string("relu")}});
    g->output(c);
    return std::make_unique<GraphModule>(root_, std::move(g));
  }

  at::Tensor reference(const at::Tensor& x) const {
    return at::relu(at::conv2d(x, w_, b_, 1, 1));
  }

  torch::nn::Module root_;
  at::Tensor w_, b_;
};

void expect_close(const at::Tensor& got, const at::Tensor& want) {
  EXPECT_TRUE(at::allclose(got, want, 1e-4, 1e-4))
      << "max |got - want| = " << (got - want).abs().max().item<double>();
}

TEST_F(NetworkTrial, KeepsTheFirstChoiceWhereTheMeasuredKernelIsSlower) {
  if (!pin_winograd("jit_wino_4x3")) {
    GTEST_SKIP() << "oneDNN offers no F(4x4, 3x3) kernel for this shape here";
  }
  auto gm = net();
  c10::AutoGradMode no_grad(false);
  at::Tensor x = at::randn(kInput);
  auto plan = InferencePlan::build(*gm, {x});
  const InferencePlan::Stats s = plan->stats();
  EXPECT_EQ(s.trial_steps, 1u);
  EXPECT_EQ(s.trial_overturned, 1u);
  EXPECT_EQ(s.winograd_steps, 0u);
  EXPECT_EQ(s.onednn_steps, 1u);
  for (int run = 0; run < 2; ++run) {
    at::Tensor in = at::randn(kInput);
    expect_close(plan->run({in}).toTensor(), reference(in));
  }
  EXPECT_EQ(plan->stats().direct_fallbacks, 0u);
}

// Without the trial the measured kernel runs, and computes the same.
TEST_F(NetworkTrial, SwitchedOffKeepsTheMeasuredKernel) {
  if (!pin_winograd("jit_wino_4x3")) {
    GTEST_SKIP() << "oneDNN offers no F(4x4, 3x3) kernel for this shape here";
  }
  set_network_trial(false);
  auto gm = net();
  c10::AutoGradMode no_grad(false);
  at::Tensor x = at::randn(kInput);
  auto plan = InferencePlan::build(*gm, {x});
  const InferencePlan::Stats s = plan->stats();
  EXPECT_EQ(s.trial_steps, 0u);
  EXPECT_EQ(s.winograd_steps, 1u);
  expect_close(plan->run({x}).toTensor(), reference(x));
}

// oneDNN's first choice measured fastest: nothing to try.
TEST_F(NetworkTrial, NothingToTryOnTheFirstChoice) {
  const std::vector<std::string> direct = OnednnConv::implementations(
      w_, b_, same_3x3(), kInput, ConvAlgorithm::kDirect);
  ASSERT_FALSE(direct.empty());
  record_conv_decision(w_, b_, same_3x3(), kInput, ConvAlgorithm::kDirect,
                       direct.front());
  EXPECT_FALSE(conv_trial(w_, b_, same_3x3(), kInput).has_value());
  auto gm = net();
  c10::AutoGradMode no_grad(false);
  auto plan = InferencePlan::build(*gm, {at::randn(kInput)});
  EXPECT_EQ(plan->stats().trial_steps, 0u);
  // Nor under a fixed policy, whatever was measured.
  ASSERT_TRUE(pin_winograd("jit_"));
  set_conv_policy(ConvPolicy::kDirect);
  EXPECT_FALSE(conv_trial(w_, b_, same_3x3(), kInput).has_value());
  set_conv_policy(ConvPolicy::kMeasure);
  EXPECT_TRUE(conv_trial(w_, b_, same_3x3(), kInput).has_value());
}

// Both kernels of a trial compute LibTorch's result.
TEST_F(NetworkTrial, BothKernelsComputeLibTorchsResult) {
  ASSERT_TRUE(pin_winograd("jit_"));
  std::optional<ConvTrial> trial = conv_trial(w_, b_, same_3x3(), kInput);
  ASSERT_TRUE(trial.has_value());
  EXPECT_EQ(trial->measured->algorithm(), ConvAlgorithm::kWinograd);
  EXPECT_EQ(trial->first_choice->algorithm(), ConvAlgorithm::kDirect);
  at::Tensor x = at::randn(kInput);
  for (OnednnConv* conv : {trial->measured.get(), trial->first_choice.get()}) {
    at::Tensor out = at::empty(
        conv->output_sizes(),
        at::TensorOptions().memory_format(at::MemoryFormat::ChannelsLast));
    conv->run(x, nullptr, out);
    expect_close(out, reference(x));
  }
}

// The trial's runs are not the caller's: the profile counts the caller's
// runs only.
TEST_F(NetworkTrial, ProfileCountsTheCallersRunsOnly) {
  ASSERT_TRUE(pin_winograd("jit_"));
  auto gm = net();
  c10::AutoGradMode no_grad(false);
  at::Tensor x = at::randn(kInput);
  setenv("FX_PLAN_PROFILE", "1", 1);
  ::testing::internal::CaptureStderr();
  {
    auto plan = InferencePlan::build(*gm, {x});
    EXPECT_EQ(plan->stats().trial_steps, 1u);
    plan->run({x});
    plan->run({x});
  }
  unsetenv("FX_PLAN_PROFILE");
  const std::string text = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(text.find("fx plan profile: 2 runs on 1x512x7x7"),
            std::string::npos)
      << text;
}

// Two convolutions of one shape (one decision of the timing alone) are
// decided together, on the sum of their times: both keep the same kernel.
TEST_F(NetworkTrial, StepsOfOneShapeAreDecidedTogether) {
  if (!pin_winograd("jit_wino_4x3")) {
    GTEST_SKIP() << "oneDNN offers no F(4x4, 3x3) kernel for this shape here";
  }
  at::Tensor w2 = root_.register_parameter(
      "w2", at::randn({512, 512, 3, 3}) * 0.015, false);
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* c1 = g->call_function(
      "fx_inference.conv2d", {x, g->get_attr("w"), g->get_attr("b")},
      {{"padding", int64_t{1}}, {"activation", std::string("relu")}});
  Node* c2 = g->call_function(
      "fx_inference.conv2d", {c1, g->get_attr("w2"), g->get_attr("b")},
      {{"padding", int64_t{1}}, {"activation", std::string("relu")}});
  g->output(c2);
  GraphModule gm(root_, std::move(g));
  c10::AutoGradMode no_grad(false);
  at::Tensor in = at::randn(kInput);
  auto plan = InferencePlan::build(gm, {in});
  const InferencePlan::Stats s = plan->stats();
  EXPECT_EQ(s.trial_steps, 2u);
  EXPECT_EQ(s.trial_groups, 1u);
  EXPECT_EQ(s.trial_overturned, 2u);  // as the one-layer network's step
  EXPECT_EQ(s.winograd_steps, 0u);
  expect_close(plan->run({in}).toTensor(),
               at::relu(at::conv2d(reference(in), w2, b_, 1, 1)));
}

// A convolution and a linear: two groups, each decided on its own.
TEST_F(NetworkTrial, OpsOfOtherShapesAreDecidedApart) {
  if (!pin_winograd("jit_")) {
    GTEST_SKIP() << "oneDNN offers no Winograd kernel for this shape here";
  }
  set_linear_policy(LinearPolicy::kMeasure);
  at::Tensor lw =
      root_.register_parameter("lw", at::randn({256, 192}) * 0.1, false);
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* y = g->placeholder("y");
  Node* c = g->call_function(
      "fx_inference.conv2d", {x, g->get_attr("w"), g->get_attr("b")},
      {{"padding", int64_t{1}}, {"activation", std::string("relu")}});
  Node* l = g->call_function("fx_inference.linear",
                             {y, g->get_attr("lw"), Argument()},
                             {{"activation", std::string("none")}});
  g->output(Argument::tuple({c, l}));
  GraphModule gm(root_, std::move(g));
  c10::AutoGradMode no_grad(false);
  at::Tensor in = at::randn(kInput), rows = at::randn({64, 192});
  auto plan = InferencePlan::build(gm, {in, rows});
  const InferencePlan::Stats s = plan->stats();
  // The linear is tried where its timing chose oneDNN or PanelLinear.
  EXPECT_GE(s.trial_steps, 1u);
  EXPECT_EQ(s.trial_groups, s.trial_steps);
  const auto out = plan->run({in, rows}).toTuple()->elements();
  expect_close(out[0].toTensor(), reference(in));
  expect_close(out[1].toTensor(), at::linear(rows, lw));
}

// A dynamic plan keeps one packed copy of the weights: the kernel kept is
// rebuilt with the plan's shared weights, the other dropped.
TEST_F(NetworkTrial, DynamicPlanKeepsOnePackedCopy) {
  ASSERT_TRUE(pin_winograd("jit_"));
  auto gm = net();
  c10::AutoGradMode no_grad(false);
  at::Tensor x = at::randn(kInput);
  auto plan = InferencePlan::build(*gm, {x}, PlanShapes::kDynamic);
  const InferencePlan::Stats s = plan->stats();
  EXPECT_EQ(s.trial_steps, 1u);
  EXPECT_EQ(s.weight_packs, 1u);
  expect_close(plan->run({x}).toTensor(), reference(x));
}

// A linear the timing put on oneDNN or PanelLinear tries both in the
// network (linear_choice.h, LinearTrial); whichever it keeps computes
// fx_inference.linear's reference. Where PanelLinear cannot run (no
// AVX-512F) or the timing chose the BLAS, there is nothing to try.
TEST(NetworkTrialLinear, TriesPanelLinearAgainstOnednn) {
  set_linear_policy(LinearPolicy::kMeasure);
  set_network_trial(true);
  at::manual_seed(1);
  torch::nn::Module root;
  at::Tensor w =
      root.register_parameter("w", at::randn({256, 192}) * 0.1, false);
  at::Tensor b = root.register_parameter("b", at::randn({256}) * 0.1, false);
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  g->output(g->call_function("fx_inference.linear",
                             {x, g->get_attr("w"), g->get_attr("b")},
                             {{"activation", std::string("relu")}}));
  GraphModule gm(root, std::move(g));
  c10::AutoGradMode no_grad(false);
  at::Tensor in = at::randn({64, 192});
  FusedLinearParams params;
  params.activation = "relu";
  const std::optional<LinearTrial> trial =
      linear_trial(w, b, params, {64, 192});
  if (trial) {
    // The kernel timed fastest alone, then the other of the two.
    EXPECT_TRUE(trial->measured.kernel == LinearKernel::kPanel ||
                trial->measured.kernel == LinearKernel::kOnednn);
    EXPECT_NE(trial->other.kernel, trial->measured.kernel);
    EXPECT_TRUE(trial->other.kernel == LinearKernel::kPanel ||
                trial->other.kernel == LinearKernel::kOnednn);
  } else {
    EXPECT_TRUE(!PanelLinear::available() ||
                linear_measurements_won_by(LinearKernel::kBlas) > 0)
        << "nothing to try though both kernels run here";
  }
  auto plan = InferencePlan::build(gm, {in});
  const InferencePlan::Stats s = plan->stats();
  EXPECT_EQ(s.trial_steps, trial ? 1u : 0u);
  EXPECT_LE(s.trial_overturned, s.trial_steps);
  expect_close(plan->run({in}).toTensor(), at::relu(at::linear(in, w, b)));
}

// FX_NETWORK_TRIAL is read once per process: checked in fresh ones.
TEST(NetworkTrialPolicy, FromTheEnvironment) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        unsetenv("FX_NETWORK_TRIAL");
        std::_Exit(network_trial() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(
      {
        setenv("FX_NETWORK_TRIAL", "0", 1);
        std::_Exit(network_trial() ? 1 : 0);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(
      {
        setenv("FX_NETWORK_TRIAL", "yes", 1);
        try {
          network_trial();
        } catch (const FxError& e) {
          const std::string what = e.what();
          std::_Exit(
              what.find("FX_NETWORK_TRIAL=yes") != std::string::npos ? 0 : 2);
        }
        std::_Exit(1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace fx
