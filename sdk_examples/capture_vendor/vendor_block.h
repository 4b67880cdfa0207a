// The host side of the capture_vendor example: a plain-LibTorch block
// (linear, layer norm, silu, linear) and its capture with the plugin's
// decomposition and leaf operator registered.
//
//   load_capture_vendor("sdk_examples/capture_vendor/libcapture_vendor.so");
//   auto block = std::make_shared<VendorBlock>();
//   auto gm = fx::make_fx(vendor_block_function(block), {at::randn({2, 4})});
#ifndef SDK_EXAMPLES_CAPTURE_VENDOR_VENDOR_BLOCK_H_
#define SDK_EXAMPLES_CAPTURE_VENDOR_VENDOR_BLOCK_H_

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include <memory>
#include <string>

#include "fx_core/capture/make_fx.h"

namespace capture_vendor {

struct VendorBlock : torch::nn::Module {
  VendorBlock();
  at::Tensor forward(const at::Tensor& x);

  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  torch::nn::LayerNorm norm{nullptr};
};

// The block's forward as make_fx's function (one input, one output).
fx::TensorFunction vendor_block_function(std::shared_ptr<VendorBlock> block);

// Loads the plugin at `path` as a host does (its extensions registered).
// Throws std::runtime_error with the loader's message on failure.
void load_capture_vendor(const std::string& path);

}  // namespace capture_vendor

#endif  // SDK_EXAMPLES_CAPTURE_VENDOR_VENDOR_BLOCK_H_
