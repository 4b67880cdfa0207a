#include "sdk_examples/capture/examples.h"

#include <ATen/ATen.h>

#include <utility>

#include "fx_core/runtime/graph_module.h"
#include "fx_core/support/error.h"
#include "sdk_examples/capture/plain_models.h"

namespace fx::examples {

namespace {

// The example for a module holder whose forward takes one tensor.
template <typename Holder>
CaptureExample single_input(Holder model, at::Tensor input) {
  model->eval();
  CaptureExample example;
  example.module = model.ptr();
  example.fn = [model](const std::vector<at::Tensor>& in) mutable {
    return std::vector<at::Tensor>{model(in.at(0))};
  };
  example.inputs = {std::move(input)};
  return example;
}

}  // namespace

std::vector<std::string> capture_example_names() {
  return {"resnet18", "mobilenet_v2", "small_transformer"};
}

CaptureExample make_capture_example(const std::string& name) {
  if (name == "resnet18") {
    return single_input(PlainResNet18(), at::randn({1, 3, 64, 64}));
  }
  if (name == "mobilenet_v2") {
    return single_input(PlainMobileNetV2(), at::randn({1, 3, 64, 64}));
  }
  if (name == "small_transformer") {
    return single_input(SmallTransformer(), at::randint(0, 64, {2, 8}));
  }
  std::string names;
  for (const std::string& n : capture_example_names()) names += " " + n;
  throw FxError("no capture example '" + name + "'; the examples are:" + names);
}

std::shared_ptr<GraphModule> capture_example(const CaptureExample& example,
                                             MakeFxOptions options) {
  options.module = example.module.get();
  return make_fx(example.fn, example.inputs, options);
}

}  // namespace fx::examples
