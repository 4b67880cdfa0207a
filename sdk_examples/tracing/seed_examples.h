// C++ twins of the torch.fx docs' examples (the seed docs), written against
// fx::Value. Each comment shows the Python twin; tracing each gives exactly
// the graph and code torch.fx gives for it (../shared/reference/NAME).
#ifndef SDK_EXAMPLES_TRACING_SEED_EXAMPLES_H_
#define SDK_EXAMPLES_TRACING_SEED_EXAMPLES_H_

#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>

#include "fx_core/tracer/functions.h"
#include "fx_core/tracer/proxy.h"
#include "fx_core/tracer/tracer.h"

namespace fx::examples {

// seed_mymodule, the overview's example:
//   class MyModule(torch.nn.Module):
//       def __init__(self):
//           super().__init__()
//           self.param = torch.nn.Parameter(torch.rand(3, 4))
//           self.linear = torch.nn.Linear(4, 5)
//       def forward(self, x):
//           return self.linear(x + self.param).clamp(min=0.0, max=1.0)
struct MyModule : fx::Module<MyModule> {
  MyModule();
  Value forward(Value x);
  at::Tensor param;
  Submodule<torch::nn::Linear> linear;
};

// seed_topk:
//   def forward(self, x):
//       return torch.topk(torch.sum(
//           self.linear(x + self.linear.weight).relu(), dim=-1), 3)
struct TopkModule : fx::Module<TopkModule> {
  TopkModule();
  Value forward(Value x);
  Submodule<torch::nn::Linear> linear;
};

// seed_static_flow ("static control flow"), traced with do_activation=True:
//   def __init__(self, do_activation : bool = False):
//       super().__init__()
//       self.do_activation = do_activation
//       self.linear = torch.nn.Linear(512, 512)
//   def forward(self, x):
//       x = self.linear(x)
//       if self.do_activation:
//           x = torch.relu(x)
//       return x
struct StaticFlowModule : fx::Module<StaticFlowModule> {
  explicit StaticFlowModule(bool do_activation = false);
  Value forward(Value x);
  bool do_activation;
  Submodule<torch::nn::Linear> linear;
};

// seed_leaf ("leaf modules"): Linear is a leaf; MySpecialSubmodule is
// traced through.
//   class MySpecialSubmodule(torch.nn.Module):
//       def forward(self, x):
//           return torch.neg(x)
//   class MyModule(torch.nn.Module):
//       def __init__(self):
//           super().__init__()
//           self.linear = torch.nn.Linear(3, 4)
//           self.submod = MySpecialSubmodule()
//       def forward(self, x):
//           return self.submod(self.linear(x))
struct MySpecialSubmodule : fx::Module<MySpecialSubmodule> {
  Value forward(Value x) { return th::neg(x); }
};
struct LeafModule : fx::Module<LeafModule> {
  LeafModule();
  Value forward(Value x);
  Submodule<torch::nn::Linear> linear;
  Submodule<std::shared_ptr<MySpecialSubmodule>> submod;
};

// seed_dropout: the dropout module is a leaf, so the traced module follows
// train() / eval().
//   def __init__(self):
//       super().__init__()
//       self.drop = torch.nn.Dropout()
//   def forward(self, x):
//       return self.drop(x)
struct DropoutModule : fx::Module<DropoutModule> {
  DropoutModule();
  Value forward(Value x);
  Submodule<torch::nn::Dropout> drop;
};

// seed_dropout_functional, the docs' gotcha: `self.training` is read while
// tracing, so the traced graph keeps training=True even after eval().
//   def forward(self, x):
//       return torch.nn.functional.dropout(x, training=self.training)
struct DropoutFunctionalModule : fx::Module<DropoutFunctionalModule> {
  Value forward(Value x);
};

// seed_wrap: len and sqrt are leaf functions.
//   torch.fx.wrap('len')
//   from math import sqrt as math_sqrt   # autowrapped (math)
//   def normalize(x):
//       return x / math_sqrt(len(x))
struct WrapModule : fx::Module<WrapModule> {
  WrapModule();
  Value forward(Value x);
};

}  // namespace fx::examples

#endif  // SDK_EXAMPLES_TRACING_SEED_EXAMPLES_H_
