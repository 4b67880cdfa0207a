// Small helpers for passes that rewrite calls whose parameters are module
// attributes (libfx_inference's fusions, libfx_quantize's sites): reading a
// call's parameter by position or keyword, naming new attributes, and
// tidying up after a rewrite.  Header-only, built from plugin_api/include
// alone like the plugins.
#ifndef PLUGINS_COMMON_REWRITE_UTIL_H_
#define PLUGINS_COMMON_REWRITE_UTIL_H_

#include <cstddef>
#include <string>

#include "fx/plugin_api.hpp"

namespace fx_plugins {

// The parameter `name` of the call `n`: its keyword argument, else its
// positional argument at `index`, else an empty view.
inline fxp::ArgView call_param(const fxp::Node& n, size_t index,
                               const char* name) {
  if (fxp::ArgView k = n.kwarg(name)) return k;
  return index < n.num_args() ? n.arg(index) : fxp::ArgView();
}

// A dotted path with its dots as underscores ("layer1.0.conv1" ->
// "layer1_0_conv1"), the base of an attribute named after it.
inline std::string flat(std::string s) {
  for (char& c : s) {
    if (c == '.') c = '_';
  }
  return s;
}

// `base`, or base_1, base_2, ...: the first name the graph's module has no
// attribute or submodule of.
inline std::string fresh_attr_name(const fxp::Graph& g,
                                   const std::string& base) {
  std::string name = base;
  for (int i = 1; g.has_attr(name.c_str()); ++i) {
    name = base + "_" + std::to_string(i);
  }
  return name;
}

// Erases the get_attr nodes a rewrite left without users.
inline void erase_unused_get_attrs(fxp::Graph& g) {
  for (fxp::Node n : g) {
    if (n.op() == FX_OP_GET_ATTR && n.num_users() == 0) g.erase_node(n);
  }
}

// Gives `to` the meta['tensor_meta'] of `from`, when it has one: a node
// that takes another's place computes the same value.
inline void copy_tensor_meta(const fxp::Node& from, fxp::Node& to) {
  if (fxp::ArgView m = from.meta("tensor_meta")) {
    to.set_meta("tensor_meta", fxp::Arg(m));
  }
}

}  // namespace fx_plugins

#endif  // PLUGINS_COMMON_REWRITE_UTIL_H_
