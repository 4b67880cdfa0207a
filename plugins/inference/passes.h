// The passes of libfx_inference.so, one a file (fold_bn.cc, fuse_conv.cc,
// fuse_linear.cc, fuse_matmul.cc, fuse_window_attention.cc; fuse_pointwise
// in fuse_pointwise.h), for
// the plugin's registration (plugin.cc), which gives their names,
// descriptions and order. Each rewrites what it finds and returns whether
// it changed the graph; all keep meta['tensor_meta'] (the replaced chain's
// last value's).
#ifndef PLUGINS_INFERENCE_PASSES_H_
#define PLUGINS_INFERENCE_PASSES_H_

#include "fx/plugin_api.hpp"

namespace fx_inference {

// Eval-mode BatchNorm2d folded into the Conv2d before it (fold_bn.cc).
bool fold_bn(fxp::Graph& g, const fxp::Options& options);

// Conv2d + residual add + activation -> fx_inference.conv2d (fuse_conv.cc).
bool fuse_conv(fxp::Graph& g, const fxp::Options& options);

// Linear + residual add + activation -> fx_inference.linear
// (fuse_linear.cc).
bool fuse_linear(fxp::Graph& g, const fxp::Options& options);

// matmul [* number] -> fx_inference.matmul (fuse_matmul.cc).
bool fuse_matmul(fxp::Graph& g, const fxp::Options& options);

// torchvision's shifted_window_attention -> fx_inference.window_attention
// (fuse_window_attention.cc).
bool fuse_window_attention(fxp::Graph& g, const fxp::Options& options);

}  // namespace fx_inference

#endif  // PLUGINS_INFERENCE_PASSES_H_
