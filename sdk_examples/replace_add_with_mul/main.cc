// Loads a bundle, replaces additions with multiplications, prints the code
// before and after, and runs both on the bundle's input.
#include <ATen/ATen.h>

#include <iostream>
#include <string>

#include "fx_core/graph_module_file.h"
#include "sdk_examples/replace_add_with_mul/replace_add_with_mul.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: replace_add_with_mul BUNDLE/graph.fx.json\n";
    return 2;
  }
  auto gm = fx::read_graph_module(argv[1]);
  if (!gm.ok()) {
    std::cerr << gm.status().message() << "\n";
    return 1;
  }
  std::string dir = std::string(argv[1]);
  dir = dir.substr(0, dir.rfind('/') + 1);
  auto inputs = fx::read_value_file(dir + "input.pt");
  std::cout << "# before\n" << (*gm)->code();
  c10::IValue before;
  if (inputs.ok()) before = (*gm)->forward(inputs->toListRef().vec());
  size_t changed = sdk_examples::replace_add_with_mul(**gm);
  std::cout << "\n# after (" << changed << " nodes changed)\n" << (*gm)->code();
  if (inputs.ok() && before.isTensor()) {
    at::Tensor after = (*gm)->forward(inputs->toListRef().vec()).toTensor();
    std::cout << "\nmean output before: "
              << before.toTensor().mean().item<double>()
              << ", after: " << after.mean().item<double>() << "\n";
  }
  return 0;
}
