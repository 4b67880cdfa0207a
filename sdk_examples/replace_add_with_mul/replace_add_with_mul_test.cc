// The transform turns MyModule's `x + param` into `x * param`: the code says
// so and the numbers are LibTorch's for the multiplied graph.
#include "sdk_examples/replace_add_with_mul/replace_add_with_mul.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>

#include "fx_core/graph.h"

namespace {

TEST(ReplaceAddWithMul, RetargetsOperatorAndTorchAddAndRecompiles) {
  torch::nn::Module root;
  root.register_parameter("param", at::rand({3, 4}));
  auto linear = torch::nn::Linear(4, 5);
  root.register_module("linear", linear);
  auto graph = std::make_unique<fx::Graph>();
  fx::Node* x = graph->placeholder("x");
  fx::Node* param = graph->get_attr("param");
  fx::Node* add = graph->call_function("operator.add", {x, param});
  fx::Node* lin = graph->call_module("linear", {add});
  fx::Node* add2 = graph->call_function("torch.add", {lin, fx::Argument(1.0)});
  graph->output(add2);
  fx::GraphModule gm(root, std::move(graph));

  EXPECT_EQ(sdk_examples::replace_add_with_mul(gm), 2u);
  EXPECT_NE(gm.code().find("add = x * param"), std::string::npos) << gm.code();
  EXPECT_NE(gm.code().find("add_1 = torch.mul(linear, 1.0)"), std::string::npos)
      << gm.code();
  at::Tensor in = at::rand({3, 4});
  at::Tensor want =
      linear->forward(in * root.named_parameters()["param"]) * 1.0;
  EXPECT_TRUE(at::allclose(gm(in).toTensor(), want));
}

}  // namespace
