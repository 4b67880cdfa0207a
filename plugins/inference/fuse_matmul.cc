// fuse_matmul (libfx_inference.so): a matmul of two tensors
// (operator.matmul, torch.matmul, torch.bmm, Tensor.matmul) and a
// multiplication of its only use by a number (attention's q @ k^T * scale)
// become one fx_inference.matmul node, which the InferencePlan runs on
// oneDNN's matmul reading strided (permuted, transposed) operands in place.
#include <cstddef>
#include <optional>

#include "fx/plugin_api.hpp"
#include "plugins/inference/chain.h"
#include "plugins/inference/passes.h"

namespace fx_inference {
namespace {

using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

constexpr const char* kFusedMatmul = "torch.ops.fx_inference.matmul";

bool is_matmul(const Node& n) {
  return binary_call(n, {"operator.matmul", "torch.matmul", "torch.bmm"},
                     "matmul") &&
         n.arg(0).is_node() && n.arg(1).is_node();
}

// The number `mul` multiplies `value` by (either order, no out=), or nullopt.
std::optional<double> scale_of(const Node& mul, const Node& value) {
  if (!binary_call(mul, {"operator.mul", "torch.mul"}, "mul")) {
    return std::nullopt;
  }
  for (size_t i = 0; i < 2; ++i) {
    ArgView v = mul.arg(i), other = mul.arg(1 - i);
    if (!v.is_node() || v.node() != value) continue;
    if (other.kind() == FX_ARG_FLOAT || other.kind() == FX_ARG_INT) {
      return other.as_float();
    }
  }
  return std::nullopt;
}

}  // namespace

bool fuse_matmul(Graph& g, const fxp::Options&) {
  bool changed = false;
  for (Node n : g.nodes()) {  // a copy: the chains erase later nodes
    if (!is_matmul(n)) continue;
    Chain c;
    c.nodes.push_back(n);
    double scale = 1.0;
    if (n.num_users() == 1) {
      if (auto s = scale_of(n.users()[0], n)) {
        scale = *s;
        c.nodes.push_back(n.users()[0]);
      }
    }
    replace_chain(g, c, [&] {
      return g.call_function(kFusedMatmul,
                             {Arg(n.arg(0).node()), Arg(n.arg(1).node())},
                             {{"scale", Arg(scale)}});
    });
    changed = true;
  }
  return changed;
}

}  // namespace fx_inference
