// param_fetch: torch 1.13's torch.fx.passes.param_fetch.
// lift_lowering_attrs_to_nodes(gm): each call_module node of a leaf module
// gets what a lowering needs of its module, in meta['attrs_for_lowering']
// (torch sets the attribute node.attrs_for_lowering).
//
// As torch's module_fetch_book has it, for six classes (and no others):
//   Linear             weight, bias
//   Conv2d             weight, bias, kernel_size, stride, padding, dilation,
//                      groups, padding_mode
//   BatchNorm2d        weight, bias, running_mean, running_var, eps
//   AdaptiveAvgPool2d  (nothing)
//   MaxPool2d          kernel_size, stride, padding, dilation,
//                      return_indices, ceil_mode
//   ReLU               inplace
// plus "name", the class's qualified name (torch.typename). Values are the
// module's as its constructor was given them (kernel_size=3 stays 3: the
// host keeps the spelling, fx_core/runtime/modules/given_config.h). A
// tensor (a parameter or buffer), which a node's meta cannot hold, is a
// reference {"get_attr": "conv1.weight"} to the module's attribute; an
// absent one (bias=False, affine=False) is None, as torch's getattr gives.
// A module of another class is refused with torch's RuntimeError message,
// before anything changes. torch recurses into GraphModule children; their
// graphs are not reachable through the C ABI, so their call_module nodes
// are left alone here.
#include <string>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/optimization/passes.h"

namespace fx_optimization {
namespace {

using fxp::Arg;
using fxp::Node;

// torch's module_fetch_book: the class (as the host names it), its
// qualified name, the attributes fetched; which of them are tensors.
struct FetchEntry {
  const char* type;
  const char* qualified;
  std::vector<const char*> tensors;
  std::vector<const char*> values;  // from the constructor's arguments
};

const std::vector<FetchEntry>& fetch_book() {
  static const std::vector<FetchEntry> book = {
      {"torch.nn.Linear",
       "torch.nn.modules.linear.Linear",
       {"weight", "bias"},
       {}},
      {"torch.nn.Conv2d",
       "torch.nn.modules.conv.Conv2d",
       {"weight", "bias"},
       {"kernel_size", "stride", "padding", "dilation", "groups",
        "padding_mode"}},
      {"torch.nn.BatchNorm2d",
       "torch.nn.modules.batchnorm.BatchNorm2d",
       {"weight", "bias", "running_mean", "running_var"},
       {"eps"}},
      {"torch.nn.AdaptiveAvgPool2d",
       "torch.nn.modules.pooling.AdaptiveAvgPool2d",
       {},
       {}},
      {"torch.nn.MaxPool2d",
       "torch.nn.modules.pooling.MaxPool2d",
       {},
       {"kernel_size", "stride", "padding", "dilation", "return_indices",
        "ceil_mode"}},
      {"torch.nn.ReLU", "torch.nn.modules.activation.ReLU", {}, {"inplace"}},
  };
  return book;
}

constexpr const char* kGraphModule = "torch.fx.graph_module.GraphModule";

// The fetched attributes of module `target`, in torch's order.
Arg attrs_for_lowering(const fxp::Graph& g, const std::string& target,
                       const FetchEntry& entry) {
  std::vector<std::pair<std::string, Arg>> items = {
      {"name", Arg(entry.qualified)}};
  // torch's book lists each class's tensors before its other values.
  for (const char* t : entry.tensors) {
    const std::string name = target + "." + t;
    items.emplace_back(t, g.has_attr(name.c_str())
                              ? Arg::dict({{"get_attr", Arg(name)}})
                              : Arg());
  }
  const Arg config = fxp::module_config(g, target.c_str());
  for (const char* v : entry.values) {
    fxp::ArgView value = fxp::dict_get(config.view(), v);
    if (!value) {
      throw fxp::Error(FX_INTERNAL, "param_fetch: the config of '" + target +
                                        "' has no '" + v + "'");
    }
    items.emplace_back(v, Arg(value));
  }
  return Arg::dict(items);
}

}  // namespace

bool param_fetch(fxp::Graph& g, const fxp::Options&) {
  std::vector<std::pair<Node, Arg>> fetched;
  for (Node n : g) {
    if (n.op() != FX_OP_CALL_MODULE) continue;
    const std::string target(n.target());
    const std::string type = g.module_type(target.c_str());
    if (type == kGraphModule) continue;
    const FetchEntry* entry = nullptr;
    for (const FetchEntry& e : fetch_book()) {
      if (type == e.type) entry = &e;
    }
    if (entry == nullptr) {
      throw fxp::Error(
          FX_INVALID_ARGUMENT,
          "param_fetch: node '" + std::string(n.name()) + "' calls " + type +
              ", which is not in the module_fetch_book yet (torch's "
              "RuntimeError: only Linear, Conv2d, BatchNorm2d, "
              "AdaptiveAvgPool2d, MaxPool2d and ReLU)");
    }
    fetched.emplace_back(n, attrs_for_lowering(g, target, *entry));
  }
  for (auto& [n, attrs] : fetched) n.set_meta("attrs_for_lowering", attrs);
  return !fetched.empty();
}

}  // namespace fx_optimization
