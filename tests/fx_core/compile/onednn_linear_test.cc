// fx::OnednnLinear against fx_inference.linear's reference kernel (ATen's
// linear, add, then the activation; fused_linear_check.h)
// at the suite transformer's shapes and small ones, for every activation,
// with and without bias and residual, on strided and 1-d inputs; create()
// refuses what oneDNN would compute differently. And the InferencePlan on a
// graph of fx_inference.linear nodes: allclose to GraphModule::forward,
// bound to oneDNN, and each fallback forced (other shape, strided input,
// double, grad mode); under each linear policy, oneDNN or PanelLinear where
// it says.
#include "fx_core/compile/onednn_linear.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>
#include <torch/nn/module.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/compile/inference_plan.h"
#include "fx_core/compile/linear_choice.h"
#include "fx_core/compile/network_trial.h"
#include "fx_core/compile/panel_linear.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "tests/fx_core/compile/fused_linear_check.h"

namespace fx {
namespace {

void expect_close(const at::Tensor& got, const at::Tensor& want,
                  const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  EXPECT_TRUE(at::allclose(got, want, 1e-4, 1e-5))
      << what
      << ": max |got - want| = " << (got - want).abs().max().item<double>();
}

// One primitive on `x`, compared with fx_inference.linear's reference
// kernel (fused_linear_check.h).
void check(const at::Tensor& x, int64_t n, bool bias, bool residual,
           const FusedLinearParams& p, const std::string& what) {
  testing::check_fused_linear(
      [](const at::Tensor& w, const at::Tensor& b, const FusedLinearParams& q,
         std::vector<int64_t> in) {
        return OnednnLinear::create(w, b, q, std::move(in));
      },
      x, n, bias, residual, p, what);
}

TEST(OnednnLinear, TransformerShapesMatchATen) {
  at::manual_seed(0);
  FusedLinearParams none, gelu;
  gelu.activation = "gelu";
  at::Tensor x = at::randn({1, 128, 256});
  check(x, 768, true, false, none, "qkv 128x256x768");
  check(x, 256, true, true, none, "proj + residual 128x256x256");
  check(x, 1024, true, false, gelu, "fc1 + gelu 128x256x1024");
  check(at::randn({1, 128, 1024}), 256, true, true, none,
        "fc2 + residual 128x1024x256");
  check(x, 1000, true, false, none, "head 128x256x1000");
}

TEST(OnednnLinear, EveryActivationMatchesATen) {
  at::manual_seed(1);
  for (const char* a : {"none", "relu", "gelu", "gelu_tanh", "hardtanh",
                        "hardswish", "silu", "sigmoid", "hardsigmoid"}) {
    FusedLinearParams p;
    p.activation = a;
    p.min_val = -0.5;
    p.max_val = 0.25;
    for (bool residual : {false, true}) {
      check(at::randn({3, 5, 24}), 40, true, residual, p,
            std::string(a) + (residual ? " + residual" : ""));
    }
  }
}

TEST(OnednnLinear, NoBiasStridedAndOneDimensionalInputs) {
  at::manual_seed(2);
  FusedLinearParams relu;
  relu.activation = "relu";
  check(at::randn({7, 33}), 9, false, false, relu, "no bias, 2-d");
  check(at::randn({33}), 9, true, true, relu, "1-d");
  at::Tensor strided = at::randn({6, 66}).narrow(1, 0, 33);
  ASSERT_FALSE(strided.is_contiguous());
  check(strided, 17, true, true, relu, "strided input");
  check(at::randn({4, 6}).t(), 5, true, false, relu, "transposed input");
}

TEST(OnednnLinear, RefusesWhatItCannotComputeAlike) {
  FusedLinearParams p;
  at::Tensor w = at::randn({8, 4});
  EXPECT_NE(OnednnLinear::create(w, at::randn({8}), p, {2, 4}), nullptr);
  EXPECT_EQ(OnednnLinear::create(w.to(at::kDouble), at::Tensor(), p, {2, 4}),
            nullptr);
  EXPECT_EQ(OnednnLinear::create(w, at::randn({8}, at::kDouble), p, {2, 4}),
            nullptr);
  EXPECT_EQ(OnednnLinear::create(w, at::randn({7}), p, {2, 4}), nullptr);
  EXPECT_EQ(OnednnLinear::create(w, at::Tensor(), p, {2, 5}), nullptr);
  EXPECT_EQ(OnednnLinear::create(w, at::Tensor(), p, {0, 4}), nullptr);
  EXPECT_EQ(OnednnLinear::create(w, at::Tensor(), p, {}), nullptr);
  EXPECT_EQ(OnednnLinear::create(at::randn({8, 4, 1}), at::Tensor(), p, {2, 4}),
            nullptr);
  p.activation = "softplus";
  EXPECT_EQ(OnednnLinear::create(w, at::Tensor(), p, {2, 4}), nullptr);
}

// x -> linear + gelu -> linear + residual(x) -> linear (no bias) + relu,
// the middle value also an output (a fresh result each run).
std::unique_ptr<GraphModule> linear_graph(torch::nn::Module& root) {
  root.register_parameter("w1", at::randn({32, 16}) * 0.25);
  root.register_parameter("b1", at::randn({32}) * 0.1);
  root.register_parameter("w2", at::randn({16, 32}) * 0.2);
  root.register_parameter("b2", at::randn({16}) * 0.1);
  root.register_parameter("w3", at::randn({8, 16}) * 0.25);
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* h = g->call_function("fx_inference.linear",
                             {x, g->get_attr("w1"), g->get_attr("b1")},
                             {{"activation", std::string("gelu")}});
  Node* y = g->call_function(
      "fx_inference.linear", {h, g->get_attr("w2"), g->get_attr("b2")},
      {{"residual", x}, {"activation", std::string("none")}});
  Node* z = g->call_function("fx_inference.linear",
                             {y, g->get_attr("w3"), Argument()},
                             {{"activation", std::string("relu")}});
  g->output(Argument::tuple({z, y}));
  return std::make_unique<GraphModule>(root, std::move(g));
}

void expect_outputs_close(const c10::IValue& got, const c10::IValue& want,
                          const std::string& what) {
  ASSERT_TRUE(got.isTuple() && want.isTuple()) << what;
  for (size_t i = 0; i < 2; ++i) {
    expect_close(got.toTupleRef().elements()[i].toTensor(),
                 want.toTupleRef().elements()[i].toTensor(),
                 what + " [" + std::to_string(i) + "]");
  }
}

TEST(OnednnLinear, PlanBindsLinearsAndEachFallbackMatchesForward) {
  set_linear_policy(LinearPolicy::kOnednn);
  at::manual_seed(3);
  auto root = std::make_shared<torch::nn::Module>();
  auto gm = linear_graph(*root);
  c10::AutoGradMode no_grad(false);
  at::Tensor x = at::randn({2, 5, 16});
  auto plan = InferencePlan::build(*gm, {x});
  for (int run = 0; run < 2; ++run) {
    expect_outputs_close(plan->run({x}), gm->forward({x}), "planned");
  }
  EXPECT_EQ(plan->stats().onednn_steps, 3u);
  EXPECT_EQ(plan->stats().direct_fallbacks, 0u);
  // Another shape: re-planned, still on oneDNN.
  at::Tensor other = at::randn({7, 16});
  expect_outputs_close(plan->run({other}), gm->forward({other}), "other shape");
  EXPECT_EQ(plan->stats().replans, 1u);
  EXPECT_EQ(plan->stats().onednn_steps, 3u);
  // A strided input of the planned sizes: re-planned.
  at::Tensor strided = at::randn({2, 5, 32}).narrow(2, 0, 16);
  expect_outputs_close(plan->run({strided}), gm->forward({strided}), "strided");
  EXPECT_EQ(plan->stats().replans, 2u);
  // Grad mode: GraphModule::forward.
  {
    c10::AutoGradMode grad(true);
    expect_outputs_close(plan->run({x}), gm->forward({x}), "grad mode");
    EXPECT_EQ(plan->stats().forward_calls, 1u);
  }
  // Double: the reference kernel, no oneDNN step.
  gm->to(at::kDouble);
  at::Tensor x64 = x.to(at::kDouble);
  auto plan64 = InferencePlan::build(*gm, {x64});
  c10::IValue got = plan64->run({x64});
  EXPECT_EQ(got.toTupleRef().elements()[0].toTensor().scalar_type(),
            at::kDouble);
  EXPECT_EQ(plan64->stats().onednn_steps, 0u);
  expect_outputs_close(got, gm->forward({x64}), "double");
}

// The plan under each linear policy (linear_choice.h): the reference's
// result, on oneDNN exactly where the policy put it. Shapes no other test
// of this process measures, so the measured decisions are this plan's.
TEST(OnednnLinear, PlanFollowsTheLinearPolicy) {
  // One thread: measured whatever the BLAS (linear_choice.h).
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  at::manual_seed(4);
  auto root = std::make_shared<torch::nn::Module>();
  auto gm = linear_graph(*root);
  c10::AutoGradMode no_grad(false);
  at::Tensor x = at::randn({3, 11, 16});
  const c10::IValue want = gm->forward({x});
  set_linear_policy(LinearPolicy::kAten);
  auto aten = InferencePlan::build(*gm, {x});
  expect_outputs_close(aten->run({x}), want, "aten");
  EXPECT_EQ(aten->stats().onednn_steps, 0u);
  // The BLAS split over the plan's threads, at 1 and 2 of them.
  set_linear_policy(LinearPolicy::kBlas);
  for (int n : {1, 2}) {
    at::set_num_threads(n);
    auto blas = InferencePlan::build(*gm, {x});
    expect_outputs_close(blas->run({x}), want, "blas");
    expect_outputs_close(blas->run({x}), want, "blas, second run");
    EXPECT_EQ(blas->stats().onednn_steps, 0u);
    EXPECT_EQ(blas->stats().direct_fallbacks, 0u);
  }
  // The plan's own AVX-512 product, where the CPU has it, at 1 and 2
  // threads.
  set_linear_policy(LinearPolicy::kPanel);
  for (int n : {1, 2}) {
    at::set_num_threads(n);
    auto panel = InferencePlan::build(*gm, {x});
    expect_outputs_close(panel->run({x}), want, "panel");
    expect_outputs_close(panel->run({x}), want, "panel, second run");
    EXPECT_EQ(panel->stats().panel_steps, PanelLinear::available() ? 3u : 0u);
    EXPECT_EQ(panel->stats().onednn_steps, 0u);
    EXPECT_EQ(panel->stats().direct_fallbacks, 0u);
  }
  at::set_num_threads(1);
  set_linear_policy(LinearPolicy::kMeasure);
  // The kernels timed alone, not moved by the network trial (which
  // network_trial_test covers; below, it may move any of the three).
  set_network_trial(false);
  const size_t measured = linear_measurements();
  const size_t others_won = linear_measurements_won_by(LinearKernel::kBlas) +
                            linear_measurements_won_by(LinearKernel::kAten);
  const size_t panel_won = linear_measurements_won_by(LinearKernel::kPanel);
  auto chosen = InferencePlan::build(*gm, {x});
  expect_outputs_close(chosen->run({x}), want, "measure");
  expect_outputs_close(chosen->run({x}), want, "measure, second run");
  EXPECT_EQ(linear_measurements(), measured + 3);
  const size_t panel_steps =
      linear_measurements_won_by(LinearKernel::kPanel) - panel_won;
  EXPECT_EQ(chosen->stats().panel_steps, panel_steps);
  EXPECT_EQ(chosen->stats().onednn_steps,
            3u - panel_steps -
                (linear_measurements_won_by(LinearKernel::kBlas) +
                 linear_measurements_won_by(LinearKernel::kAten) - others_won));
  EXPECT_EQ(chosen->stats().direct_fallbacks, 0u);
  // Built again: the cached decisions, the same kernels.
  auto again = InferencePlan::build(*gm, {x});
  EXPECT_EQ(linear_measurements(), measured + 3);
  EXPECT_EQ(again->stats().onednn_steps, chosen->stats().onednn_steps);
  // With the trial, each of the three ends on oneDNN or PanelLinear
  // (the pair the trial chooses between) or on the BLAS or ATen kernel
  // that won alone, and the result is the same.
  set_network_trial(true);
  auto tried = InferencePlan::build(*gm, {x});
  expect_outputs_close(tried->run({x}), want, "measure, tried");
  EXPECT_EQ(tried->stats().onednn_steps + tried->stats().panel_steps,
            chosen->stats().onednn_steps + chosen->stats().panel_steps);
  EXPECT_LE(tried->stats().trial_overturned, tried->stats().trial_steps);
  at::set_num_threads(threads);
}

}  // namespace
}  // namespace fx
