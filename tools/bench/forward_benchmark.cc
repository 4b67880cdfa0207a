// C++ side of the forward benchmark: the SDK's GraphModule (compiled plan)
// and Interpreter on bundles written by tools/bench/forward_bench.py.
//
//   forward_benchmark DIR NAME... [--repeat N]
//
// Prints one JSON object: {name: {"sdk_us": .., "interpreter_us": ..}}, the
// median microseconds per forward under NoGradGuard, with the output checked
// against the bundle's expected.pt first.
#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/interpreter.h"
#include "tools/bench/timing.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: forward_benchmark DIR NAME... [--repeat N]\n";
    return 2;
  }
  std::string dir = argv[1];
  int repeat = 20;
  std::vector<std::string> names;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--repeat" && i + 1 < argc) {
      repeat = std::atoi(argv[++i]);
    } else {
      names.push_back(a);
    }
  }
  torch::NoGradGuard no_grad;
  std::cout << "{";
  for (size_t k = 0; k < names.size(); ++k) {
    const std::string bundle = dir + "/" + names[k] + "/";
    auto gm = fx::read_graph_module(bundle + "graph.fx.json");
    if (!gm.ok()) {
      std::cerr << names[k] << ": " << gm.status().message() << "\n";
      return 1;
    }
    auto inputs = fx::read_value_file(bundle + "input.pt");
    auto expected = fx::read_value_file(bundle + "expected.pt");
    if (!inputs.ok() || !expected.ok()) {
      std::cerr << names[k] << ": cannot read input.pt / expected.pt\n";
      return 1;
    }
    std::vector<c10::IValue> in = inputs->toListRef().vec();
    at::Tensor out = (*gm)->forward(in).toTensor();
    if (!at::allclose(out, expected->toTensor(), 1e-4, 1e-5)) {
      std::cerr << names[k] << ": output differs from expected.pt\n";
      return 1;
    }
    // Small graphs run many times per sample (timer resolution).
    int scale = (*gm)->graph().size() > 300 && out.numel() < 1000 ? 20 : 1;
    double sdk = fx::bench::median_us([&] { (*gm)->forward(in); },
                                      std::max(3, repeat * scale / 2));
    fx::Interpreter interpreter(**gm);
    double interp = fx::bench::median_us([&] { interpreter.run(in); },
                                         std::max(3, repeat * scale / 2));
    std::cout << (k ? ", " : "") << "\"" << names[k]
              << "\": {\"sdk_us\": " << sdk
              << ", \"interpreter_us\": " << interp << "}";
  }
  std::cout << "}\n";
  return 0;
}
