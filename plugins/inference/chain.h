// The chain a fused node of libfx_inference replaces (fuse_conv,
// fuse_linear, fuse_matmul): a head (a convolution, a linear layer, a
// matmul) and the single users after it that the fused op takes as its
// tail, a residual add of a tensor of the same shape (by
// meta['tensor_meta']) and then one activation. The fused node takes the
// place and meta['tensor_meta'] of the chain's last value; the chain's
// nodes go.
#ifndef PLUGINS_INFERENCE_CHAIN_H_
#define PLUGINS_INFERENCE_CHAIN_H_

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/rewrite_util.h"

namespace fx_inference {

// An activation the fused ops take: relu, hardtanh (its bounds; relu6 is
// hardtanh 0..6), hardswish, silu, sigmoid, hardsigmoid, gelu, gelu_tanh.
struct Activation {
  std::string name;
  double min_val = 0.0, max_val = 0.0;
};

// The head, its tail and what the fused node takes of them.
struct Chain {
  std::vector<fxp::Node> nodes;  // the head first, the last value last
  std::optional<fxp::Node> residual;
  Activation act{"none"};
};

// Whether `n` calls one of `functions` or the Tensor method `method`, with
// two positional arguments and no keywords.
bool binary_call(const fxp::Node& n,
                 std::initializer_list<std::string_view> functions,
                 std::string_view method);

// `head` and its tail; gelu only when `gelu` (oneDNN's convolutions here do
// not take it).
Chain chain_after(fxp::Graph& g, const fxp::Node& head, bool gelu);

// Replaces the chain's nodes with the node `make` inserts (after the
// chain's last node, so the new nodes keep their order).
template <typename Make>
void replace_chain(fxp::Graph& g, const Chain& c, Make make) {
  fxp::Node last = c.nodes.back();
  fxp::Node fused;
  {
    // Before the node after the chain (an output node always follows).
    auto guard = g.inserting_before(last.next());
    fused = make();
  }
  fx_plugins::copy_tensor_meta(last, fused);
  last.replace_all_uses_with(fused);
  for (auto it = c.nodes.rbegin(); it != c.nodes.rend(); ++it) {
    g.erase_node(*it);
  }
}

// A fused node's leading arguments: input, weight and bias (None when
// `bias` is empty), the parameters as get_attr nodes.
std::vector<fxp::Arg> input_weight_bias(fxp::Graph& g, fxp::Node input,
                                        const std::string& weight,
                                        const std::string& bias);

// A fused node's keyword arguments for its tail: residual=, activation=
// and hardtanh's bounds.
fxp::Kwargs tail_kwargs(const Chain& c);

// Replaces every site `site_of` finds (a conv or a linear) and its tail
// with the node `make(site, chain)` builds; `gelu`: whether the tail may
// end in gelu.
template <typename SiteOf, typename Make>
bool fuse_sites(fxp::Graph& g, SiteOf site_of, bool gelu, Make make) {
  bool changed = false;
  // The chains erase nodes after the one being visited: walk a copy.
  for (fxp::Node n : g.nodes()) {
    auto site = site_of(g, n);
    if (!site) continue;
    Chain c = chain_after(g, n, gelu);
    replace_chain(g, c, [&] { return make(*site, c); });
    changed = true;
  }
  fx_plugins::erase_unused_get_attrs(g);
  return changed;
}

}  // namespace fx_inference

#endif  // PLUGINS_INFERENCE_CHAIN_H_
