// The torch.fx docs' MyModule, shared by the runtime suites:
//
//   class MyModule(torch.nn.Module):
//       def __init__(self):
//           super().__init__()
//           self.param = torch.nn.Parameter(torch.rand(3, 4))
//           self.linear = torch.nn.Linear(4, 5)
//       def forward(self, x):
//           return self.linear(x + self.param).clamp(min=0.0, max=1.0)
#ifndef TESTS_TESTING_MY_MODULE_H_
#define TESTS_TESTING_MY_MODULE_H_

#include <ATen/ATen.h>
#include <torch/nn/modules/linear.h>

#include <memory>

#include "fx_core/ir/graph.h"

namespace fx::testing {

struct MyModule : torch::nn::Module {
  MyModule() {
    param = register_parameter("param", at::rand({3, 4}));
    linear = register_module("linear", torch::nn::Linear(4, 5));
  }
  // What the eager module computes.
  at::Tensor forward(const at::Tensor& x) {
    return linear->forward(x + param).clamp(0.0, 1.0);
  }
  at::Tensor param;
  torch::nn::Linear linear{nullptr};
};

// The graph symbolic_trace(MyModule()) records (../shared/reference/
// seed_mymodule/graph.txt), built node by node.
inline std::unique_ptr<Graph> my_module_graph() {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* param = g->get_attr("param");
  Node* add = g->call_function("operator.add", {x, param});
  Node* linear = g->call_module("linear", {add});
  Node* clamp = g->call_method(
      "clamp", {linear}, {{"min", Argument(0.0)}, {"max", Argument(1.0)}});
  g->output(clamp);
  return g;
}

}  // namespace fx::testing

#endif  // TESTS_TESTING_MY_MODULE_H_
