// fuse_conv (libfx_inference.so): a Conv2d (module, or torch.conv2d /
// F.conv2d of attribute weights) and the chain of single users after it (a
// residual `add` of a tensor of the same shape, then one activation: relu,
// relu6/hardtanh, hardswish, silu, sigmoid, hardsigmoid; chain.h) become
// one fx_inference.conv2d node (fx_core/runtime/ops/inference_ops.cc),
// which the host runs with ATen's kernels and the InferencePlan binds to
// oneDNN with the tail as post-ops.
#include <string>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/inference/chain.h"
#include "plugins/inference/passes.h"
#include "plugins/inference/sites.h"

namespace fx_inference {
namespace {

using fxp::Arg;
using fxp::Graph;
using fxp::Node;

constexpr const char* kFusedConv = "torch.ops.fx_inference.conv2d";

Node fused_node(Graph& g, const ConvSite& conv, const Chain& c) {
  std::vector<Arg> args =
      input_weight_bias(g, conv.input, conv.weight, conv.bias);
  for (const Arg& a : conv.config) args.push_back(a);
  return g.call_function(kFusedConv, args, tail_kwargs(c));
}

}  // namespace

bool fuse_conv(Graph& g, const fxp::Options&) {
  return fuse_sites(g, conv_site, /*gelu=*/false,
                    [&](const ConvSite& conv, const Chain& c) {
                      return fused_node(g, conv, c);
                    });
}

}  // namespace fx_inference
