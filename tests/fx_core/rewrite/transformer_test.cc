// fx::Transformer on graphs built in C++: the default copy, overrides that
// return new nodes, existing values or literals, meta kept on every node an
// original node produced, and the result's module.
#include "fx_core/rewrite/transformer.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>

#include <memory>
#include <string>

#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/support/error.h"
#include "tests/testing/graph_helpers.h"

namespace fx {
namespace {

using testing::error_of;
using testing::graph_order;
using testing::Names;

// x, w (get_attr), relu(x + w), linear(relu), clamp(min=0) -> output
std::shared_ptr<GraphModule> sample_module() {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x", "torch.Tensor");
  Node* w = g->get_attr("w");
  Node* add = g->call_function("operator.add", {x, w});
  Node* relu = g->call_function("torch.relu", {add});
  Node* lin = g->call_module("lin", {relu});
  Node* clamp = g->call_method("clamp", {lin}, {{"min", Argument(0.0)}});
  g->output(clamp);
  GraphModule::AttributeMap attrs;
  GraphModule::Attribute wa, la;
  wa.tensor = at::ones({4});
  wa.is_parameter = true;
  la.module = torch::nn::Linear(4, 2).ptr();
  attrs.emplace_back("w", wa);
  attrs.emplace_back("lin", la);
  return std::make_shared<GraphModule>(attrs, std::move(g));
}

TEST(Transformer, CopiesTheGraphAndComputesTheSame) {
  auto gm = sample_module();
  std::shared_ptr<GraphModule> out = Transformer(*gm).transform();
  EXPECT_EQ(graph_order(out->graph()),
            (Names{"x", "w", "add", "relu", "lin", "clamp", "output"}));
  at::Tensor x = at::randn({3, 4});
  EXPECT_TRUE(
      at::allclose(out->forward({x}).toTensor(), gm->forward({x}).toTensor()));
  // torch.fx's Transformer drops placeholder annotations (its placeholder()
  // passes none).
  EXPECT_EQ(out->graph().first()->type(), "");
  out->graph().lint();
}

// An override may return an existing value: relu disappears.
struct DropRelu : Transformer {
  using Transformer::Transformer;
  Argument call_function(const Node& n, std::string_view target,
                         Node::Args args, Node::Kwargs kwargs) override {
    if (target == "torch.relu") return args[0];
    return Transformer::call_function(n, target, std::move(args),
                                      std::move(kwargs));
  }
};

TEST(Transformer, AnOverrideCanReturnAnExistingValue) {
  auto gm = sample_module();
  std::shared_ptr<GraphModule> out = DropRelu(*gm).transform();
  EXPECT_EQ(graph_order(out->graph()),
            (Names{"x", "w", "add", "lin", "clamp", "output"}));
  at::Tensor x = at::randn({3, 4});
  at::Tensor expected =
      gm->get_submodule("lin")->as<torch::nn::Linear>()->forward(x + 1).clamp(
          0.0);
  EXPECT_TRUE(at::allclose(out->forward({x}).toTensor(), expected));
}

// An override may create several nodes; all of them get the meta of the node
// they stand for, placeholders and get_attr included.
struct SplitAdd : Transformer {
  using Transformer::Transformer;
  Argument call_function(const Node& n, std::string_view target,
                         Node::Args args, Node::Kwargs kwargs) override {
    if (target == "operator.add") {
      Node* neg = graph().call_function("operator.neg", {args[1]});
      return Argument(graph().call_function("operator.sub", {args[0], neg}));
    }
    return Transformer::call_function(n, target, std::move(args),
                                      std::move(kwargs));
  }
};

TEST(Transformer, MetaGoesToEveryNodeMadeForANode) {
  auto gm = sample_module();
  for (Node* n : gm->graph().nodes()) {
    n->set_meta("from", std::string(n->name()));
  }
  std::shared_ptr<GraphModule> out = SplitAdd(*gm).transform();
  EXPECT_EQ(graph_order(out->graph()),
            (Names{"x", "w", "neg", "sub", "relu", "lin", "clamp", "output"}));
  auto from = [&](const char* name) {
    for (const Node* n : out->graph().nodes()) {
      if (n->name() == name) return n->meta_value("from")->as_string();
    }
    return std::string("?");
  };
  EXPECT_EQ(from("x"), "x");
  EXPECT_EQ(from("w"), "w");
  EXPECT_EQ(from("neg"), "add");
  EXPECT_EQ(from("sub"), "add");
  EXPECT_EQ(from("output"), "output");
  at::Tensor x = at::randn({3, 4});
  EXPECT_TRUE(
      at::allclose(out->forward({x}).toTensor(), gm->forward({x}).toTensor()));
}

TEST(Transformer, WithoutKeepMetaOnlyIsWrappedSurvives) {
  auto gm = sample_module();
  for (Node* n : gm->graph().nodes()) {
    n->set_meta("from", std::string(n->name()));
    n->set_meta("is_wrapped", true);
  }
  Transformer::Options options;
  options.keep_meta = false;
  std::shared_ptr<GraphModule> out = Transformer(*gm, options).transform();
  for (const Node* n : out->graph().nodes()) {
    EXPECT_EQ(n->meta_value("from"), nullptr) << n->name();
    if (n->op() != Opcode::kOutput) {
      EXPECT_NE(n->meta_value("is_wrapped"), nullptr) << n->name();
    }
  }
}

TEST(Transformer, TheResultSharesTheModulesAndTransformsOnce) {
  auto gm = sample_module();
  Transformer t(*gm);
  std::shared_ptr<GraphModule> out = t.transform();
  EXPECT_EQ(out->get_submodule("lin"), gm->get_submodule("lin"));
  EXPECT_TRUE(out->get_attr("w").is_same(gm->get_attr("w")));
  EXPECT_EQ(error_of([&] { t.transform(); }),
            "Transformer: transform() may only be called once");
}

// The output hook decides what the new graph returns.
struct ReturnTuple : Transformer {
  using Transformer::Transformer;
  Argument output(const Node& n, std::string_view target, Node::Args args,
                  Node::Kwargs kwargs) override {
    Argument out =
        Transformer::output(n, target, std::move(args), std::move(kwargs));
    return Argument::tuple({out, out});
  }
};

TEST(Transformer, TheOutputHookSetsWhatTheGraphReturns) {
  auto gm = sample_module();
  std::shared_ptr<GraphModule> out = ReturnTuple(*gm).transform();
  c10::IValue y = out->forward({at::randn({3, 4})});
  ASSERT_TRUE(y.isTuple());
  EXPECT_EQ(y.toTupleRef().elements().size(), 2u);
}

}  // namespace
}  // namespace fx
