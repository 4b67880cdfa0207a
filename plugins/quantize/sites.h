// The Linear and Conv2d calls the quantize passes work on ("sites"), and
// the rewrites they share: a weight quantized per output channel, the op
// on a dequantized weight.
#ifndef PLUGINS_QUANTIZE_SITES_H_
#define PLUGINS_QUANTIZE_SITES_H_

#include <optional>
#include <string>
#include <vector>

#include "fx/plugin_api.hpp"

namespace fx_quant {

// A Linear or Conv2d call: module form or functional form with a get_attr
// weight.
struct Site {
  fxp::Node node;
  bool conv = false;
  std::string weight;               // attribute path of the float weight
  std::string bias;                 // attribute path, or empty
  std::string module;               // call_module target, or empty
  std::vector<fxp::Arg> conv_args;  // stride, padding, dilation, groups
  std::string name;                 // base for new attribute names
};

// The site `n` is, if it is one.
std::optional<Site> site_of(fxp::Graph& g, fxp::Node n);

// Whether an earlier pass marked the node to stay float
// (meta['quantize'] = False).
bool is_skipped(fxp::Node n);

// The sites to quantize, in graph order: those no `skip` entry names and
// none marked. A `skip` entry names a site by its node's name; its module's
// path or a parent's ("layer4" for layer4.0.conv1), or its type
// ("torch.nn.Linear"); its function ("torch.nn.functional.linear"); or,
// for a function on a get_attr weight, the module path the weight's name
// starts with, flattened (fold_bn's layer4_0_conv1_folded_weight is
// layer4's). Named sites are marked meta['quantize'] = False, so that
// quantize_convert leaves them in float too.
std::vector<Site> sites(fxp::Graph& g,
                        const std::vector<std::string>& skip = {});

// Quantizes the site's float weight per output channel (axis 0, symmetric
// with `bits`), stores the int8 weight and the scales as attributes, and
// records int8.to(float32) * scale at the insertion point; nullopt when
// the weight is not float.
std::optional<fxp::Value> quantized_weight(fxp::Graph& g, const Site& s,
                                           int bits);

// The site's op on `x` with weight `w` (F.linear / F.conv2d).
fxp::Value float_op(fxp::Graph& g, const Site& s, const fxp::Value& x,
                    const fxp::Value& w);

// The site's input.
fxp::Value input_of(const Site& s);

// Replaces `old` by `with` everywhere and erases it.
void replace(fxp::Graph& g, fxp::Node old, const fxp::Value& with);

}  // namespace fx_quant

#endif  // PLUGINS_QUANTIZE_SITES_H_
