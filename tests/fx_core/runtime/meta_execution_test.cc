// Meta execution: run_and_report reports every node in graph order; on meta
// tensors it gives each node the sizes, strides and dtype LibTorch gives on
// real tensors (through the shape rules for conv and relu, meta kernels, and
// the CPU fallback, whose ops it remembers); the callback's exceptions stop
// the run unchanged; evaluate_constant computes nodes from attributes alone.
#include "fx_core/runtime/meta_execution.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"

namespace fx {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// x -> conv -> relu -> * scale -> adaptive_avg_pool2d -> flatten -> fc,
// returning (fc, fc.size()): a shape rule (Conv2d module, torch.relu), meta
// kernels (torch.flatten, size, the Linear module), the CPU fallback
// (adaptive_avg_pool2d to 2x2 has no meta kernel in LibTorch 1.13), and
// meta tensors meeting the module's real ones (`relu * scale`, which fails
// on meta and so runs on CPU, and the Linear module's parameters).
std::shared_ptr<GraphModule> small_net() {
  torch::manual_seed(0);
  torch::nn::Module root;
  root.register_module(
      "conv", torch::nn::Conv2d(
                  torch::nn::Conv2dOptions(3, 8, 3).stride(2).padding(1)));
  root.register_module("fc", torch::nn::Linear(32, 5));
  root.register_buffer("scale", at::rand({1, 8, 1, 1}));
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* conv = g->call_module("conv", {x});
  Node* relu = g->call_function("torch.relu", {conv});
  Node* scale = g->get_attr("scale");
  Node* mul = g->call_function("operator.mul", {relu, scale});
  Node* pool = g->call_function("torch.nn.functional.adaptive_avg_pool2d",
                                {mul, Argument(2)});
  Node* flat = g->call_function("torch.flatten", {pool, Argument(1)});
  Node* fc = g->call_module("fc", {flat});
  Node* size = g->call_method("size", {fc});
  g->output(Argument::tuple({fc, size}));
  return std::make_shared<GraphModule>(root, std::move(g));
}

// What a run reported: node names in order, and each node's value.
struct Report {
  std::vector<std::string> names;
  std::vector<c10::IValue> values;
  NodeValueFn callback() {
    return [this](const Node& n, const c10::IValue& v) {
      names.emplace_back(n.name());
      values.push_back(v);
    };
  }
};

TEST(MetaExecution, ReportsEveryNodeInGraphOrder) {
  auto gm = small_net();
  for (ExecutionMode mode : {ExecutionMode::kReal, ExecutionMode::kMeta}) {
    Report report;
    run_and_report(*gm, {at::rand({2, 3, 16, 16})}, mode, report.callback());
    EXPECT_THAT(report.names, ElementsAre("x", "conv", "relu", "scale", "mul",
                                          "adaptive_avg_pool2d", "flatten",
                                          "fc", "size", "output"));
  }
}

TEST(MetaExecution, MetaShapesAreTheShapesOfARealRun) {
  auto gm = small_net();
  at::Tensor x = at::rand({2, 3, 16, 16});
  Report real, meta;
  c10::IValue real_out =
      run_and_report(*gm, {x}, ExecutionMode::kReal, real.callback());
  c10::IValue meta_out =
      run_and_report(*gm, {at::empty({2, 3, 16, 16}, at::kMeta)},
                     ExecutionMode::kMeta, meta.callback());
  ASSERT_EQ(real.names, meta.names);
  for (size_t i = 0; i < real.values.size(); ++i) {
    const c10::IValue& r = real.values[i];
    const c10::IValue& m = meta.values[i];
    if (!r.isTensor()) continue;
    ASSERT_TRUE(m.isTensor()) << real.names[i];
    const at::Tensor& rt = r.toTensor();
    const at::Tensor& mt = m.toTensor();
    EXPECT_EQ(rt.sizes(), mt.sizes()) << real.names[i];
    EXPECT_EQ(rt.strides(), mt.strides()) << real.names[i];
    EXPECT_EQ(rt.scalar_type(), mt.scalar_type()) << real.names[i];
    // get_attr gives the module's real tensor; everything computed is meta.
    EXPECT_EQ(mt.is_meta(), real.names[i] != "scale") << real.names[i];
  }
  EXPECT_EQ(real.values[1].toTensor().sizes(), (at::IntArrayRef{2, 8, 8, 8}));
  // The output: (fc, fc.size()), the size a list of ints in both runs.
  EXPECT_EQ(meta_out.toTupleRef().elements()[0].toTensor().sizes(),
            (at::IntArrayRef{2, 5}));
  const c10::IValue& meta_size = meta_out.toTupleRef().elements()[1];
  const c10::IValue& real_size = real_out.toTupleRef().elements()[1];
  EXPECT_TRUE(is_torch_size(meta_size));
  auto ints = [](const c10::IValue& v) {
    std::vector<int64_t> out;
    for (const c10::IValue& d : sequence_elements(v)) out.push_back(d.toInt());
    return out;
  };
  EXPECT_EQ(ints(meta_size), ints(real_size));
}

TEST(MetaExecution, RealRunComputesWhatForwardComputes) {
  auto gm = small_net();
  at::Tensor x = at::rand({1, 3, 8, 8});
  c10::IValue out = run_and_report(*gm, {x}, ExecutionMode::kReal);
  c10::IValue expected = gm->forward({x});
  EXPECT_TRUE(at::equal(out.toTupleRef().elements()[0].toTensor(),
                        expected.toTupleRef().elements()[0].toTensor()));
}

TEST(MetaExecution, RealInputsOfAMetaRunBecomeMetaTensors) {
  auto gm = small_net();
  at::Tensor x = at::rand({4, 3, 10, 10}).permute({0, 2, 3, 1});  // strided
  Report report;
  run_and_report(*gm, {x}, ExecutionMode::kMeta, report.callback());
  const at::Tensor& placeholder = report.values[0].toTensor();
  EXPECT_TRUE(placeholder.is_meta());
  EXPECT_EQ(placeholder.sizes(), x.sizes());
  EXPECT_EQ(placeholder.strides(), x.strides());
}

TEST(MetaExecution, ToMetaKeepsSizesStridesAndDtypeInsideTuples) {
  at::Tensor t = at::zeros({2, 3}, at::kDouble).t();
  c10::IValue v = to_meta(c10::ivalue::Tuple::create({t, c10::IValue(7)}));
  const at::Tensor& m = v.toTupleRef().elements()[0].toTensor();
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(m.sizes(), t.sizes());
  EXPECT_EQ(m.strides(), t.strides());
  EXPECT_EQ(m.scalar_type(), at::kDouble);
  EXPECT_EQ(v.toTupleRef().elements()[1].toInt(), 7);
}

TEST(MetaExecution, OpsWithoutAMetaKernelAreRemembered) {
  auto gm = small_net();
  for (int run = 0; run < 2; ++run) {  // the second run uses the cache
    c10::IValue out = run_and_report(*gm, {at::empty({1, 3, 8, 8}, at::kMeta)},
                                     ExecutionMode::kMeta);
    EXPECT_EQ(out.toTupleRef().elements()[0].toTensor().sizes(),
              (at::IntArrayRef{1, 5}));
  }
  std::vector<std::string> missing = ops_without_meta_kernel();
  EXPECT_THAT(
      missing,
      Contains("call_function:torch.nn.functional.adaptive_avg_pool2d"));
  // Shape rules and working meta kernels are never recorded.
  EXPECT_THAT(missing, Not(Contains("call_module:torch.nn.Conv2d")));
  EXPECT_THAT(missing, Not(Contains("call_function:torch.relu")));
}

struct Stop {
  std::string at;
};

TEST(MetaExecution, CallbackExceptionsStopTheRunUnchanged) {
  auto gm = small_net();
  std::vector<std::string> seen;
  auto stop_at_relu = [&](const Node& n, const c10::IValue&) {
    seen.emplace_back(n.name());
    if (n.name() == "relu") throw Stop{"relu"};
  };
  EXPECT_THROW(run_and_report(*gm, {at::rand({1, 3, 8, 8})},
                              ExecutionMode::kMeta, stop_at_relu),
               Stop);
  EXPECT_THAT(seen, ElementsAre("x", "conv", "relu"));

  // A standard exception is not wrapped with the node's name either.
  try {
    run_and_report(*gm, {at::rand({1, 3, 8, 8})}, ExecutionMode::kReal,
                   [](const Node&, const c10::IValue&) {
                     throw std::runtime_error("enough");
                   });
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "enough");
  }
}

TEST(MetaExecution, NodeErrorsNameTheNode) {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  g->output(g->call_function("vendor.missing", {x}));
  GraphModule gm(GraphModule::AttributeMap{}, std::move(g));
  for (ExecutionMode mode : {ExecutionMode::kReal, ExecutionMode::kMeta}) {
    try {
      run_and_report(gm, {at::rand({2})}, mode);
      ADD_FAILURE() << "no exception";
    } catch (const FxError& e) {
      EXPECT_THAT(e.what(), HasSubstr("while running node 'missing' "
                                      "(call_function vendor.missing)"));
    }
  }
}

// w (get_attr) -> neg -> add(x): neg is a constant, add is not.
struct ConstantGraph {
  ConstantGraph() {
    GraphModule::AttributeMap attrs;
    attrs.push_back({"w", {nullptr, at::arange(4.0), false}});
    auto g = std::make_unique<Graph>();
    Node* x = g->placeholder("x");
    Node* w = g->get_attr("w");
    neg = g->call_function("torch.neg", {w});
    add = g->call_function("operator.add", {neg, x});
    g->output(add);
    gm = std::make_shared<GraphModule>(attrs, std::move(g));
  }
  std::shared_ptr<GraphModule> gm;
  Node* neg;
  Node* add;
};

TEST(EvaluateConstant, ComputesFromAttributesAlone) {
  ConstantGraph c;
  c10::IValue v = evaluate_constant(*c.gm, *c.neg);
  EXPECT_TRUE(at::equal(v.toTensor(), -at::arange(4.0)));
}

TEST(EvaluateConstant, RefusesNodesThatDependOnPlaceholders) {
  ConstantGraph c;
  try {
    evaluate_constant(*c.gm, *c.add);
    ADD_FAILURE() << "no exception";
  } catch (const FxError& e) {
    EXPECT_STREQ(e.what(),
                 "node 'add' depends on placeholder 'x', so it is not a "
                 "constant");
  }
}

TEST(EvaluateConstant, RefusesNodesOfAnotherGraph) {
  ConstantGraph c, other;
  try {
    evaluate_constant(*c.gm, *other.neg);
    ADD_FAILURE() << "no exception";
  } catch (const FxError& e) {
    EXPECT_STREQ(e.what(), "node 'neg' is not a node of this module's graph");
  }
}

}  // namespace
}  // namespace fx

namespace fx {
namespace {

// Targets bound to ATen's schemas run on meta tensors like any other (the
// binding shape_prop's meta runs go through): the shapes of a real run.
TEST(MetaExecution, AtenBoundTargetsGiveTheShapesOfARealRun) {
  torch::nn::Module root;
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* lse = g->call_function("torch.logsumexp", {x, Argument(int64_t{1})},
                               {{"keepdim", Argument(true)}});
  Node* erf = g->call_function("torch._C._special.special_erf", {lse});
  g->output(erf);
  GraphModule gm(root, std::move(g));
  at::Tensor real =
      run_and_report(gm, {at::rand({4, 5})}, ExecutionMode::kReal).toTensor();
  at::Tensor meta =
      run_and_report(gm, {at::empty({4, 5}, at::kMeta)}, ExecutionMode::kMeta)
          .toTensor();
  EXPECT_TRUE(meta.is_meta());
  EXPECT_EQ(meta.sizes(), real.sizes());
  EXPECT_EQ(meta.sizes(), (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(meta.scalar_type(), real.scalar_type());
}

}  // namespace
}  // namespace fx
