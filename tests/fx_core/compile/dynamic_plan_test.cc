// A dynamic fx::InferencePlan (PlanShapes::kDynamic): one plan runs a conv
// net on batch 1..8 and an attention block on sequence lengths 4..64 without
// re-planning or calling GraphModule::forward; every result equals a static
// plan built for that shape bitwise and GraphModule::forward within float32
// rounding (oneDNN); shapes met again (after a larger one grew the shared
// buffers) stay right; packed weights are shared between shapes.
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>
#include <torch/nn/module.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "fx_core/compile/inference_plan.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"

namespace fx {
namespace {

at::Tensor param(torch::nn::Module& root, const std::string& name,
                 at::IntArrayRef sizes, double scale) {
  return root.register_parameter(name, at::randn(sizes) * scale, false);
}

// x [B, 3, 12, 12] -> conv 3x3 + relu -> conv 3x3 + residual + relu
// (summed in place) -> * 0.5 (a direct kernel) -> average pool -> flatten
// -> linear: every batch size runs.
std::unique_ptr<GraphModule> conv_net(torch::nn::Module& root) {
  param(root, "w1", {8, 3, 3, 3}, 0.3);
  param(root, "b1", {8}, 0.1);
  param(root, "w2", {8, 8, 3, 3}, 0.2);
  param(root, "b2", {8}, 0.1);
  param(root, "wl", {10, 8}, 0.3);
  param(root, "bl", {10}, 0.1);
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* c1 = g->call_function(
      "fx_inference.conv2d", {x, g->get_attr("w1"), g->get_attr("b1")},
      {{"padding", int64_t{1}}, {"activation", std::string("relu")}});
  Node* c2 = g->call_function("fx_inference.conv2d",
                              {c1, g->get_attr("w2"), g->get_attr("b2")},
                              {{"padding", int64_t{1}},
                               {"residual", c1},
                               {"activation", std::string("relu")}});
  Node* half = g->call_function("operator.mul", {c2, 0.5});
  Node* pool = g->call_function("torch.nn.functional.adaptive_avg_pool2d",
                                {half, int64_t{1}});
  Node* flat = g->call_function("torch.flatten", {pool, int64_t{1}});
  Node* out = g->call_function("fx_inference.linear",
                               {flat, g->get_attr("wl"), g->get_attr("bl")});
  g->output(out);
  return std::make_unique<GraphModule>(root, std::move(g));
}

// One attention block on x [1, S, 32], 4 heads: q, k, v linears, heads
// split with sizes read from x, q @ k^T * scale and att @ v on oneDNN,
// softmax, heads merged, output linear + residual, layer_norm.
std::unique_ptr<GraphModule> attention_block(torch::nn::Module& root) {
  for (const char* n : {"q", "k", "v", "o"}) {
    param(root, std::string("w") + n, {32, 32}, 0.18);
    param(root, std::string("b") + n, {32}, 0.05);
  }
  root.register_parameter("ln_w", at::ones({32}) + at::randn({32}) * 0.1,
                          false);
  param(root, "ln_b", {32}, 0.1);
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* b = g->call_method("size", {x, int64_t{0}});
  Node* s = g->call_method("size", {x, int64_t{1}});
  auto heads = [&](const char* n) {
    Node* lin = g->call_function("fx_inference.linear",
                                 {x, g->get_attr(std::string("w") + n),
                                  g->get_attr(std::string("b") + n)});
    Node* v = g->call_method("view", {lin, b, s, int64_t{4}, int64_t{8}});
    return g->call_method("permute",
                          {v, int64_t{0}, int64_t{2}, int64_t{1}, int64_t{3}});
  };
  Node* q = heads("q");
  Node* k = heads("k");
  Node* v = heads("v");
  Node* kt = g->call_method("transpose", {k, int64_t{-2}, int64_t{-1}});
  Node* att = g->call_function("fx_inference.matmul", {q, kt, 0.35355339});
  Node* sm = g->call_function("torch.nn.functional.softmax", {att},
                              {{"dim", int64_t{-1}}});
  Node* o = g->call_function("fx_inference.matmul", {sm, v, 1.0});
  Node* merged = g->call_method(
      "permute", {o, int64_t{0}, int64_t{2}, int64_t{1}, int64_t{3}});
  Node* flat = g->call_method("reshape", {merged, b, s, int64_t{32}});
  Node* y = g->call_function("fx_inference.linear",
                             {flat, g->get_attr("wo"), g->get_attr("bo")},
                             {{"residual", x}});
  Node* ln = g->call_function("torch.nn.functional.layer_norm",
                              {y, Argument::tuple({int64_t{32}}),
                               g->get_attr("ln_w"), g->get_attr("ln_b")});
  g->output(ln);
  return std::make_unique<GraphModule>(root, std::move(g));
}

void expect_close(const at::Tensor& got, const at::Tensor& want,
                  const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  EXPECT_TRUE(at::allclose(got, want, 1e-4, 1e-5))
      << what
      << ": max |got - want| = " << (got - want).abs().max().item<double>();
}

// The dynamic plan on `inputs` (the first is the example) in this order and
// then again in reverse: each result close to GraphModule::forward's, and
// on shapes met before (planned runs) bitwise a static plan's planned run
// for that shape. (A shape's first call returns its planning run's result,
// computed by the registries' kernels, as a static plan's build does.)
void expect_dynamic_matches(GraphModule& gm,
                            const std::vector<at::Tensor>& inputs,
                            const std::string& name) {
  c10::AutoGradMode no_grad(false);
  auto plan = InferencePlan::build(gm, {inputs[0]}, PlanShapes::kDynamic);
  std::vector<at::Tensor> order = inputs;
  order.insert(order.end(), inputs.rbegin(), inputs.rend());
  std::set<std::vector<int64_t>> seen = {inputs[0].sizes().vec()};
  for (const at::Tensor& x : order) {
    const std::string what = name + " " + c10::str(x.sizes());
    at::Tensor got = plan->run({x}).toTensor();
    expect_close(got, gm.forward({x}).toTensor(), what);
    if (!seen.insert(x.sizes().vec()).second) {
      auto fixed = InferencePlan::build(gm, {x});
      at::Tensor want = fixed->run({x}).toTensor();
      EXPECT_TRUE(got.strides() == want.strides() && at::equal(got, want))
          << what << ": not the static plan's result";
    }
  }
  InferencePlan::Stats stats = plan->stats();
  EXPECT_TRUE(stats.dynamic);
  EXPECT_EQ(stats.plan_builds, 1u) << name;
  EXPECT_EQ(stats.replans, 0u) << name;
  EXPECT_EQ(stats.forward_calls, 0u) << name;
  EXPECT_EQ(stats.direct_fallbacks, 0u) << name;
  EXPECT_EQ(stats.shape_specialisations, inputs.size()) << name;
  EXPECT_EQ(stats.live_specialisations, inputs.size()) << name;
  EXPECT_GT(stats.onednn_steps, 0u) << name;
}

TEST(DynamicPlan, ConvNetOnBatchOneToEight) {
  at::manual_seed(1);
  auto root = std::make_shared<torch::nn::Module>();
  auto gm = conv_net(*root);
  std::vector<at::Tensor> inputs;
  for (int64_t batch : {4, 1, 2, 3, 5, 6, 7, 8}) {
    inputs.push_back(at::randn({batch, 3, 12, 12}));
  }
  expect_dynamic_matches(*gm, inputs, "conv net");
}

TEST(DynamicPlan, AttentionBlockOnSequenceLengths) {
  at::manual_seed(2);
  auto root = std::make_shared<torch::nn::Module>();
  auto gm = attention_block(*root);
  std::vector<at::Tensor> inputs;
  for (int64_t seq : {16, 4, 7, 33, 64})
    inputs.push_back(at::randn({1, seq, 32}));
  expect_dynamic_matches(*gm, inputs, "attention block");
}

TEST(DynamicPlan, SharesWeightsAndBuffersBetweenShapes) {
  at::manual_seed(3);
  auto root = std::make_shared<torch::nn::Module>();
  auto gm = conv_net(*root);
  c10::AutoGradMode no_grad(false);
  auto plan = InferencePlan::build(*gm, {at::randn({1, 3, 12, 12})},
                                   PlanShapes::kDynamic);
  const size_t packs = plan->stats().weight_packs;
  EXPECT_EQ(packs, 3u);  // w1, w2, wl
  size_t largest = 0;
  for (int64_t batch = 1; batch <= 8; ++batch) {
    plan->run({at::randn({batch, 3, 12, 12})});
    auto fixed = InferencePlan::build(*gm, {at::randn({batch, 3, 12, 12})});
    largest = std::max(largest, fixed->stats().buffer_bytes);
  }
  InferencePlan::Stats stats = plan->stats();
  // oneDNN wants each weight in one layout for every batch size here.
  EXPECT_EQ(stats.weight_packs, packs);
  // The buffers of eight shapes take what the largest alone takes.
  EXPECT_GT(stats.shared_buffer_bytes, 0u);
  EXPECT_LE(stats.shared_buffer_bytes, largest);
  EXPECT_EQ(stats.shape_specialisations, 8u);
}

// A static plan on the same inputs re-plans; its counts say so.
TEST(DynamicPlan, StaticPlanCountsItsBuilds) {
  at::manual_seed(4);
  auto root = std::make_shared<torch::nn::Module>();
  auto gm = conv_net(*root);
  c10::AutoGradMode no_grad(false);
  auto plan = InferencePlan::build(*gm, {at::randn({1, 3, 12, 12})});
  for (int64_t batch : {2, 3, 2}) plan->run({at::randn({batch, 3, 12, 12})});
  InferencePlan::Stats stats = plan->stats();
  EXPECT_FALSE(stats.dynamic);
  EXPECT_EQ(stats.replans, 3u);
  EXPECT_EQ(stats.plan_builds, 4u);
  EXPECT_EQ(stats.shape_specialisations, 1u);
}

// Grad mode and a wrong input count behave as in a static plan.
TEST(DynamicPlan, GradModeAndWrongInputCount) {
  at::manual_seed(5);
  auto root = std::make_shared<torch::nn::Module>();
  auto gm = conv_net(*root);
  std::unique_ptr<InferencePlan> plan;
  {
    c10::AutoGradMode no_grad(false);
    plan = InferencePlan::build(*gm, {at::randn({2, 3, 12, 12})},
                                PlanShapes::kDynamic);
    EXPECT_ANY_THROW(plan->run({}));  // GraphModule::forward's error
    EXPECT_EQ(plan->stats().forward_calls, 1u);
    // Nothing kept for it: the plan still runs its shapes planned.
    at::Tensor x = at::randn({2, 3, 12, 12});
    expect_close(plan->run({x}).toTensor(), gm->forward({x}).toTensor(),
                 "after the error");
    EXPECT_EQ(plan->stats().forward_calls, 1u);
    EXPECT_EQ(plan->stats().shape_specialisations, 1u);
  }
  c10::AutoGradMode grad(true);
  at::Tensor x = at::randn({3, 3, 12, 12});
  expect_close(plan->run({x}).toTensor(), gm->forward({x}).toTensor(),
               "grad mode");
  EXPECT_EQ(plan->stats().forward_calls, 2u);
}

}  // namespace
}  // namespace fx
