#include "tools/demo.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/linear.h>

#include <memory>

#include "fx_core/cpp_codegen.h"
#include "fx_core/graph.h"
#include "fx_core/graph_module.h"
#include "fx_core/interpreter.h"

namespace fx::tools {
namespace {

// The torch.fx docs' example:
//
//   class MyModule(torch.nn.Module):
//       def __init__(self):
//           super().__init__()
//           self.param = torch.nn.Parameter(torch.rand(3, 4))
//           self.linear = torch.nn.Linear(4, 5)
//       def forward(self, x):
//           return self.linear(x + self.param).clamp(min=0.0, max=1.0)
struct MyModule : torch::nn::Module {
  MyModule() {
    param = register_parameter("param", at::rand({3, 4}));
    linear = register_module("linear", torch::nn::Linear(4, 5));
  }
  at::Tensor forward(const at::Tensor& x) {
    return linear->forward(x + param).clamp(0.0, 1.0);
  }
  at::Tensor param;
  torch::nn::Linear linear{nullptr};
};

// The graph symbolic_trace(MyModule()) records, built node by node.
std::unique_ptr<Graph> build_graph() {
  auto graph = std::make_unique<Graph>();
  Node* x = graph->placeholder("x");
  Node* param = graph->get_attr("param");
  Node* add = graph->call_function("operator.add", {x, param});
  Node* linear = graph->call_module("linear", {add});
  Node* clamp = graph->call_method(
      "clamp", {linear}, {{"min", Argument(0.0)}, {"max", Argument(1.0)}});
  graph->output(clamp);
  return graph;
}

}  // namespace

int run_demo(std::ostream& out, std::ostream& err) {
  at::manual_seed(0);
  MyModule root;
  GraphModule gm(root, build_graph());

  out << "# The seed docs' MyModule as an fx graph (print(gm.graph)):\n\n"
      << gm.graph().str() << "\n\n# gm.graph.print_tabular():\n\n"
      << gm.graph().tabular() << "\n# gm.code:\n"
      << gm.code() << "\n# The same graph as C++ (fx code --lang=cpp):\n\n"
      << gen_cpp_code(gm.graph(), {{"linear", "torch.nn.Linear"}}, "demo");

  at::Tensor x = at::rand({3, 4});
  at::Tensor eager = root.forward(x);
  at::Tensor compiled = gm(x).toTensor();
  Interpreter interpreter(gm);
  at::Tensor interpreted = interpreter.run({x}).toTensor();
  double diff = std::max((compiled - eager).abs().max().item<double>(),
                         (interpreted - eager).abs().max().item<double>());
  out << "\n# Run on x = torch.rand(3, 4):\n\n"
      << "eager MyModule:      " << eager.sizes() << "\n"
      << "GraphModule.forward: " << compiled.sizes() << "\n"
      << "Interpreter.run:     " << interpreted.sizes() << "\n"
      << "max |difference| against eager: " << diff << "\n";
  if (diff != 0) {
    err << "fx demo: the graph's output differs from eager MyModule\n";
    return 1;
  }
  out << "The GraphModule and the Interpreter compute exactly what eager "
         "MyModule computes.\n";
  return 0;
}

}  // namespace fx::tools
