// The convolutions and linear layers libfx_inference's passes rewrite
// (fold_bn, fuse_conv, fuse_linear): calls whose weight (and bias) are
// module attributes, as a torch.nn module call or as the functional call
// on get_attr nodes. A call of any other form is not a site: the passes
// leave it as it is.
#ifndef PLUGINS_INFERENCE_SITES_H_
#define PLUGINS_INFERENCE_SITES_H_

#include <optional>
#include <string>
#include <vector>

#include "fx/plugin_api.hpp"

namespace fx_inference {

// A 2-d convolution whose weight (and bias) are attributes.
struct ConvSite {
  fxp::Node node;
  fxp::Node input;
  std::string weight;            // attribute path
  std::string bias;              // attribute path, or empty
  std::vector<fxp::Arg> config;  // stride, padding, dilation, groups
};

// `n` as a ConvSite: a torch.nn.Conv2d call of one input (zero padding
// mode), or torch.conv2d / F.conv2d of get_attr weight and bias with
// numeric stride, padding, dilation and groups.
std::optional<ConvSite> conv_site(fxp::Graph& g, const fxp::Node& n);

// A linear layer whose weight (and bias) are attributes.
struct LinearSite {
  fxp::Node node;
  fxp::Node input;
  std::string weight;  // attribute path
  std::string bias;    // attribute path, or empty
};

// `n` as a LinearSite: a torch.nn.Linear call of one input, or F.linear
// of get_attr weight and bias.
std::optional<LinearSite> linear_site(fxp::Graph& g, const fxp::Node& n);

}  // namespace fx_inference

#endif  // PLUGINS_INFERENCE_SITES_H_
