#include "sdk_examples/capture_vendor/vendor_block.h"

#include <ATen/ATen.h>

#include <stdexcept>
#include <utility>

#include "host/loader/plugin_loader.h"
#include "host/pipeline/pass_registry.h"

namespace capture_vendor {

VendorBlock::VendorBlock() {
  fc1 = register_module("fc1", torch::nn::Linear(4, 8));
  norm = register_module(
      "norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({8})));
  fc2 = register_module("fc2", torch::nn::Linear(8, 4));
}

// at::linear, as Python's nn.Linear calls it (torch::nn::Linear's forward
// records other calls on inputs that are not 2-d; fx_core/capture/README.md).
at::Tensor VendorBlock::forward(const at::Tensor& x) {
  at::Tensor y = at::linear(x, fc1->weight, fc1->bias);
  y = norm(y);
  y = at::silu(y);
  return at::linear(y, fc2->weight, fc2->bias);
}

fx::TensorFunction vendor_block_function(std::shared_ptr<VendorBlock> block) {
  return [block = std::move(block)](const std::vector<at::Tensor>& in) {
    return std::vector<at::Tensor>{block->forward(in.at(0))};
  };
}

void load_capture_vendor(const std::string& path) {
  auto plugin = fx::host::load_plugin(path);
  if (!plugin.ok()) throw std::runtime_error(plugin.status().ToString());
  static auto* registry = new fx::host::PassRegistry();
  absl::Status added = registry->add(*plugin);
  if (!added.ok()) throw std::runtime_error(added.ToString());
}

}  // namespace capture_vendor
