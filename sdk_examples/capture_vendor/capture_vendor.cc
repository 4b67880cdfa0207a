// capture_vendor PLUGIN.so graph|code|run: loads the capture_vendor plugin,
// captures VendorBlock with fx::make_fx and prints its graph (the plugin's
// silu decomposition recorded as sigmoid and mul, its leaf layer_norm one
// node), its code, or, for `run`, whether the captured module computes what
// the eager block computes.
//
//   bazel run //sdk_examples/capture_vendor:capture_vendor --
//       sdk_examples/capture_vendor/libcapture_vendor.so graph
#include <ATen/ATen.h>

#include <exception>
#include <iostream>
#include <memory>
#include <string>

#include "fx_core/capture/make_fx.h"
#include "fx_core/runtime/graph_module.h"
#include "sdk_examples/capture_vendor/vendor_block.h"

int main(int argc, char** argv) {
  const std::string what = argc == 3 ? argv[2] : "";
  if (what != "graph" && what != "code" && what != "run") {
    std::cerr << "usage: capture_vendor PLUGIN.so graph|code|run\n";
    return 2;
  }
  try {
    capture_vendor::load_capture_vendor(argv[1]);
    at::manual_seed(0);
    auto block = std::make_shared<capture_vendor::VendorBlock>();
    at::Tensor x = at::randn({2, 4});
    fx::MakeFxOptions options;
    options.module = block.get();
    at::NoGradGuard no_grad;
    auto fn = capture_vendor::vendor_block_function(block);
    auto gm = fx::make_fx(fn, {x}, options);
    if (what == "graph") {
      std::cout << gm->graph().str() << "\n";
    } else if (what == "code") {
      std::cout << gm->code();
    } else {
      at::Tensor eager = fn({x}).at(0);
      at::Tensor captured = gm->forward({x}).toTensorList().get(0);
      const double diff = (captured - eager).abs().max().item<double>();
      std::cout << "max |captured - eager| = " << diff << "\n";
      return diff <= 1e-6 ? 0 : 1;
    }
  } catch (const std::exception& e) {
    std::cerr << "capture_vendor: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
