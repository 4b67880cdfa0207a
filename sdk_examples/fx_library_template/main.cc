// A C++ program on a model fx_library optimised at build time: reads the
// optimised bundle (conv_bn::kBundle, a data dependency), runs it through
// the generated conv_bn::run on a fixed input and prints the output's shape
// and sum. Run it with `bazel run //:conv_bn_main` (its runfiles directory is
// the working directory) or give the bundle's path as the first argument.
#include <ATen/ATen.h>

#include <iostream>
#include <string>

#include "conv_bn.h"
#include "fx_core/runtime/graph_module_file.h"

int main(int argc, char** argv) {
  const std::string bundle = argc > 1 ? argv[1] : conv_bn::kBundle;
  auto module = fx::read_graph_module(bundle);
  if (!module.ok()) {
    std::cerr << "conv_bn_main: " << bundle << ": " << module.status().message()
              << "\n";
    return 1;
  }
  (*module)->eval();
  // The shape the model was exported with (model/input.pt): 2x3x8x8.
  at::Tensor x = at::linspace(-1.0, 1.0, 2 * 3 * 8 * 8).reshape({2, 3, 8, 8});
  c10::IValue y = conv_bn::run(**module, {x});
  if (!y.isTensor()) {
    std::cerr << "conv_bn_main: conv_bn::run gave no tensor\n";
    return 1;
  }
  std::cout << "conv_bn: output " << y.toTensor().sizes() << ", sum "
            << y.toTensor().sum().item<double>() << "\n";
  return 0;
}
