#include "tests/testing/onednn_support.h"

#include <ATen/ATen.h>

#include <vector>

#include "fx_core/compile/onednn_conv.h"

namespace fx::testing {
namespace {

// A convolution OnednnConv::winograd_applies accepts: 16 channels, 3x3,
// stride 1, padding 1, no groups, residual or dilation.
bool onednn_builds_winograd() {
  FusedConvParams p;
  p.stride = {1, 1};
  p.padding = {1, 1};
  p.dilation = {1, 1};
  at::Tensor w = at::zeros({16, 16, 3, 3}), b = at::zeros({16});
  if (!OnednnConv::winograd_applies(w, p)) return false;
  return OnednnConv::create(w, b, p, {1, 16, 28, 28},
                            ConvAlgorithm::kWinograd) != nullptr;
}

}  // namespace

std::string winograd_skip_reason() {
  static const bool available = onednn_builds_winograd();
  if (available) return "";
  return "oneDNN declines its Winograd convolution on this CPU (it implements "
         "it for AVX-512 only); plans run the direct kernel here";
}

}  // namespace fx::testing
