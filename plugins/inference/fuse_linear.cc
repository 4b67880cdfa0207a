// fuse_linear (libfx_inference.so): a Linear (module, or F.linear of
// attribute weights) and the same tail as fuse_conv's, gelu included
// (chain.h), become one fx_inference.linear node, which the InferencePlan
// binds to oneDNN's matmul with the tail as post-ops.
#include "fx/plugin_api.hpp"
#include "plugins/inference/chain.h"
#include "plugins/inference/passes.h"
#include "plugins/inference/sites.h"

namespace fx_inference {
namespace {

using fxp::Graph;
using fxp::Node;

constexpr const char* kFusedLinear = "torch.ops.fx_inference.linear";

Node fused_linear_node(Graph& g, const LinearSite& linear, const Chain& c) {
  return g.call_function(
      kFusedLinear,
      input_weight_bias(g, linear.input, linear.weight, linear.bias),
      tail_kwargs(c));
}

}  // namespace

bool fuse_linear(Graph& g, const fxp::Options&) {
  return fuse_sites(g, linear_site, /*gelu=*/true,
                    [&](const LinearSite& linear, const Chain& c) {
                      return fused_linear_node(g, linear, c);
                    });
}

}  // namespace fx_inference
