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
// plus "name", the class's path as torch.typename prints it
// (torch.nn.modules.conv.Conv2d: fx_plugins::torch_class_path). Values are the
// module's as its constructor was given them (kernel_size=3 stays 3: the
// host keeps the spelling, fx_core/runtime/modules/given_config.h). A
// tensor (a parameter or buffer), which a node's meta cannot hold, is a
// reference {"get_attr": "conv1.weight"} to the module's attribute; an
// absent one (bias=False, affine=False) is None, as torch's getattr gives.
// A module of another class is refused with torch's RuntimeError message
// (the pass manager rolls back what was set before it). A call of a child
// GraphModule (a split's submod_0) is, as torch does it, the same pass on
// the child's graph (C ABI version 16's GraphSubmoduleGraph; its entries'
// references are the child's own attributes); on an older host such calls
// are left alone.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/plugin_util.h"
#include "plugins/optimization/passes.h"

namespace fx_optimization {
namespace {

using fxp::Arg;
using fxp::Node;

// torch's module_fetch_book: the class (as the host names it), the
// attributes fetched; which of them are tensors.
struct FetchEntry {
  const char* type;
  std::vector<const char*> tensors;
  std::vector<const char*> values;  // from the constructor's arguments
  std::string class_path;  // as torch prints the class (torch_class_path)
};

const std::vector<FetchEntry>& fetch_book() {
  static const std::vector<FetchEntry> book = [] {
    std::vector<FetchEntry> entries = {
        {"torch.nn.Linear", {"weight", "bias"}, {}, {}},
        {"torch.nn.Conv2d",
         {"weight", "bias"},
         {"kernel_size", "stride", "padding", "dilation", "groups",
          "padding_mode"},
         {}},
        {"torch.nn.BatchNorm2d",
         {"weight", "bias", "running_mean", "running_var"},
         {"eps"},
         {}},
        {"torch.nn.AdaptiveAvgPool2d", {}, {}, {}},
        {"torch.nn.MaxPool2d",
         {},
         {"kernel_size", "stride", "padding", "dilation", "return_indices",
          "ceil_mode"},
         {}},
        {"torch.nn.ReLU", {}, {"inplace"}, {}},
    };
    for (FetchEntry& e : entries) {
      e.class_path = fx_plugins::torch_class_path(e.type);
    }
    return entries;
  }();
  return book;
}

constexpr const char* kGraphModule = "torch.fx.graph_module.GraphModule";
constexpr uint32_t kSubmoduleGraphVersion = 16;  // GraphSubmoduleGraph

// The fetched attributes of module `target`, in torch's order. Each value
// is copied once, from the config or a local Arg, into the dict.
Arg attrs_for_lowering(const fxp::Graph& g, const std::string& target,
                       const FetchEntry& entry) {
  const Arg none;
  const Arg class_path(entry.class_path);
  std::vector<std::pair<const char*, fxp::ArgView>> items = {
      {"name", class_path.view()}};
  // torch's book lists each class's tensors before its other values.
  std::vector<Arg> references;
  references.reserve(entry.tensors.size());
  for (const char* t : entry.tensors) {
    const std::string name = target + "." + t;
    if (!g.has_attr(name.c_str())) {
      items.emplace_back(t, none.view());
      continue;
    }
    references.push_back(Arg::dict({{"get_attr", Arg(name)}}));
    items.emplace_back(t, references.back().view());
  }
  const Arg config = fxp::module_config(g, target.c_str());
  for (const char* v : entry.values) {
    fxp::ArgView value = fxp::dict_get(config.view(), v);
    if (!value) {
      throw fxp::Error(FX_INTERNAL, "param_fetch: the config of '" + target +
                                        "' has no '" + v + "'");
    }
    items.emplace_back(v, value);
  }
  return Arg::dict_of_views(items);
}

// torch's lift_lowering_attrs_to_nodes on `g`: whether a node got an entry.
bool lift_lowering_attrs(fxp::Graph& g) {
  // Each node's entry is set as it is made: a refusal further on leaves
  // the graph half-annotated, which the pass manager rolls back, and the
  // memory of one entry serves the next (holding all of them until the end
  // made a 50k-module graph fault in twice the fresh pages).
  bool changed = false;
  for (Node n : g) {
    if (n.op() != FX_OP_CALL_MODULE) continue;
    const std::string target(n.target());
    const std::string type = g.module_type(target.c_str());
    if (type == kGraphModule) {
      if (fxp::api()->version < kSubmoduleGraphVersion) continue;
      fxp::Graph child = fxp::submodule_graph(g, target.c_str());
      changed = lift_lowering_attrs(child) || changed;
      continue;
    }
    const FetchEntry* entry = nullptr;
    for (const FetchEntry& e : fetch_book()) {
      if (type == e.type) entry = &e;
    }
    if (entry == nullptr) {
      throw fxp::Error(
          FX_INVALID_ARGUMENT,
          "param_fetch: node '" + std::string(n.name()) + "' calls " +
              fx_plugins::torch_class_path(type) +
              ", which is not in the module_fetch_book yet (torch's "
              "RuntimeError: only Linear, Conv2d, BatchNorm2d, "
              "AdaptiveAvgPool2d, MaxPool2d and ReLU)");
    }
    n.set_meta("attrs_for_lowering", attrs_for_lowering(g, target, *entry));
    changed = true;
  }
  return changed;
}

}  // namespace

bool param_fetch(fxp::Graph& g, const fxp::Options&) {
  return lift_lowering_attrs(g);
}

}  // namespace fx_optimization
