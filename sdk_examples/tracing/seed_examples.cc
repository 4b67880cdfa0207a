#include "sdk_examples/tracing/seed_examples.h"

namespace fx::examples {

using namespace fx::literals;  // NOLINT: "min"_kw

MyModule::MyModule() {
  param = register_parameter("param", at::rand({3, 4}));
  linear = register_module("linear", torch::nn::Linear(4, 5));
}

Value MyModule::forward(Value x) {
  return linear(x + param).clamp("min"_kw = 0.0, "max"_kw = 1.0);
}

TopkModule::TopkModule() {
  linear = register_module("linear", torch::nn::Linear(4, 5));
}

Value TopkModule::forward(Value x) {
  return th::topk(th::sum(linear(x + linear->weight).relu(), "dim"_kw = -1), 3);
}

StaticFlowModule::StaticFlowModule(bool do_activation)
    : do_activation(do_activation) {
  linear = register_module("linear", torch::nn::Linear(512, 512));
}

Value StaticFlowModule::forward(Value x) {
  x = linear(x);
  if (do_activation) x = th::relu(x);
  return x;
}

LeafModule::LeafModule() {
  linear = register_module("linear", torch::nn::Linear(3, 4));
  submod = register_module("submod", std::make_shared<MySpecialSubmodule>());
}

Value LeafModule::forward(Value x) { return submod(linear(x)); }

DropoutModule::DropoutModule() {
  drop = register_module("drop", torch::nn::Dropout());
}

Value DropoutModule::forward(Value x) { return drop(x); }

Value DropoutFunctionalModule::forward(Value x) {
  return F::dropout(x, 0.5, is_training());
}

WrapModule::WrapModule() {
  // torch.fx.wrap('len'): module scope in Python, once per process here.
  fx::wrap("builtins.len");
}

Value WrapModule::forward(Value x) { return x / math::sqrt(builtins::len(x)); }

}  // namespace fx::examples
