// The capture examples by name (resnet18, mobilenet_v2, small_transformer),
// for the capture_examples binary and the tests: a plain-LibTorch model in
// eval mode, the function fx::make_fx captures and its example inputs.
#ifndef SDK_EXAMPLES_CAPTURE_EXAMPLES_H_
#define SDK_EXAMPLES_CAPTURE_EXAMPLES_H_

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <vector>

#include "fx_core/capture/make_fx.h"

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace fx::examples {

struct CaptureExample {
  std::shared_ptr<torch::nn::Module> module;
  TensorFunction fn;               // [module(inputs...)]
  std::vector<at::Tensor> inputs;  // example inputs, as capture_twins.py's
};

std::vector<std::string> capture_example_names();

// A new instance of example `name` in eval mode (random weights, inputs from
// the current seed). Throws fx::FxError naming the examples for an unknown
// name.
CaptureExample make_capture_example(const std::string& name);

// fx::make_fx of the example on its inputs, its module's parameters
// recorded as parameters (options.module is set here).
std::shared_ptr<GraphModule> capture_example(const CaptureExample& example,
                                             MakeFxOptions options = {});

}  // namespace fx::examples

#endif  // SDK_EXAMPLES_CAPTURE_EXAMPLES_H_
