// capture_examples NAME graph|code|run: captures example NAME with
// fx::make_fx and prints its graph (print(gm.graph)), its Python code
// (gm.code), or, for `run`, whether the captured GraphModule computes what
// the eager model computes on the example input.
//
//   bazel run //sdk_examples:capture_examples -- resnet18 code
#include <ATen/ATen.h>

#include <iostream>
#include <string>

#include "fx_core/runtime/graph_module.h"
#include "fx_core/support/error.h"
#include "sdk_examples/capture/examples.h"

namespace {

int usage() {
  std::cerr << "usage: capture_examples NAME graph|code|run\nNAME is one of:";
  for (const std::string& n : fx::examples::capture_example_names()) {
    std::cerr << " " << n;
  }
  std::cerr << "\n";
  return 2;
}

// Runs the captured module and the eager model; 0 when they agree exactly.
int run(const fx::examples::CaptureExample& example, fx::GraphModule& gm) {
  at::NoGradGuard no_grad;
  at::Tensor eager = example.fn(example.inputs).at(0);
  std::vector<c10::IValue> args(example.inputs.begin(), example.inputs.end());
  at::Tensor captured = gm.forward(args).toTensorList().get(0);
  const double diff = (captured - eager).abs().max().item<double>();
  std::cout << "output " << eager.sizes()
            << ", max |captured - eager| = " << diff << "\n";
  return diff == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return usage();
  const std::string name = argv[1], what = argv[2];
  if (what != "graph" && what != "code" && what != "run") return usage();
  try {
    auto example = fx::examples::make_capture_example(name);
    auto gm = fx::examples::capture_example(example);
    if (what == "graph") {
      std::cout << gm->graph().str() << "\n";
    } else if (what == "code") {
      std::cout << gm->code();
    } else {
      return run(example, *gm);
    }
  } catch (const fx::FxError& e) {
    std::cerr << "capture_examples: " << e.what() << "\n";
    return usage();
  }
  return 0;
}
