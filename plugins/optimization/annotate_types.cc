// torch 1.13's torch.fx.experimental.schema_type_annotation.
// AnnotateTypesWithSchema and its subclass torch.fx.experimental.normalize.
// NormalizeOperators, both Transformers.
//
// AnnotateTypesWithSchema records every node afresh, so each node loses its
// type and meta and is named again from its target (retrace.h), then types
// three kinds of node (the host knows the types: TargetReturnType):
//  - a call of a torch.nn.functional Python function: its declared return
//    annotation (annotate_functionals);
//  - a call of a module whose class is torch.nn's: its forward's
//    (annotate_modules);
//  - a get_attr of a tensor: torch.Tensor (annotate_get_attrs).
// Placeholders keep their defaults but not their types; the output loses
// its type. torch also leaves meta['stack_trace'], the Python stack of its
// own transform, on the nodes it records; there is none here.
//
// NormalizeOperators first rewrites torch.add, torch.mul, torch.sub,
// torch.div, torch.floor_divide, torch.remainder, torch.eq, torch.ne,
// torch.lt, torch.le, torch.gt and torch.ge called with two positional
// arguments as the operator.* function Python's binary operator calls.
// torch 1.13 drops the call's keyword arguments when it does
// (torch.add(a, b, alpha=2) becomes a + b, torch.div(a, b,
// rounding_mode='floor') a / b: other numbers); by default such a call is
// kept, and drop_kwargs=true does as torch does.
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/optimization/passes.h"
#include "plugins/optimization/retrace.h"

namespace fx_optimization {
namespace {

using fxp::Graph;
using fxp::Node;

struct Annotate {
  bool functionals = true;
  bool modules = true;
  bool get_attrs = true;
};

// The operator.* function a torch binary op is spelled as, or "".
std::string_view binary_operator(std::string_view target) {
  static const std::pair<std::string_view, std::string_view> kRemap[] = {
      {"torch.add", "operator.add"},
      {"torch.mul", "operator.mul"},
      {"torch.sub", "operator.sub"},
      {"torch.div", "operator.truediv"},
      {"torch.floor_divide", "operator.floordiv"},
      {"torch.remainder", "operator.mod"},
      {"torch.eq", "operator.eq"},
      {"torch.ne", "operator.ne"},
      {"torch.lt", "operator.lt"},
      {"torch.le", "operator.le"},
      {"torch.gt", "operator.gt"},
      {"torch.ge", "operator.ge"},
  };
  for (const auto& [from, to] : kRemap) {
    if (from == target) return to;
  }
  return "";
}

bool remap_operator(Node& n, bool drop_kwargs) {
  const std::string_view to = binary_operator(n.target());
  if (to.empty() || n.num_args() != 2) return false;
  if (n.num_kwargs() != 0 && !drop_kwargs) return false;
  n.set_kwargs({});
  n.set_target(std::string(to).c_str());
  return true;
}

// The type AnnotateTypesWithSchema gives `n`, or "" for none; a
// call_function target's found once (`functions`).
std::string annotation(
    const Graph& g, const Node& n, const Annotate& a,
    std::unordered_map<std::string, std::string>& functions) {
  const bool asked = (n.op() == FX_OP_CALL_FUNCTION && a.functionals) ||
                     (n.op() == FX_OP_CALL_MODULE && a.modules) ||
                     (n.op() == FX_OP_GET_ATTR && a.get_attrs);
  if (!asked) return "";
  const std::string target(n.target());
  if (n.op() != FX_OP_CALL_FUNCTION) {
    return fxp::target_return_type(g, n.op(), target).value_or("");
  }
  auto [it, added] = functions.try_emplace(target);
  if (added) {
    it->second = fxp::target_return_type(g, n.op(), target).value_or("");
  }
  return it->second;
}

// Clears `n`'s meta; true when it had any.
bool clear_meta(Node& n) {
  const FxApi* api = fxp::api();
  std::vector<std::string> keys;
  for (size_t i = 0; i < api->NodeNumMeta(n.get()); ++i) {
    keys.emplace_back(api->NodeMetaKey(n.get(), i));
  }
  for (const std::string& key : keys) {
    fxp::check(api->NodeRemoveMeta(n.get(), key.c_str()));
  }
  return !keys.empty();
}

bool transform(Graph& g, const Annotate& a, const std::string& pass, bool remap,
               bool drop_kwargs) {
  require_renaming(pass);
  bool changed = false;
  for (Node n : g) {
    if (remap && n.op() == FX_OP_CALL_FUNCTION) {
      changed |= remap_operator(n, drop_kwargs);
    }
  }
  // Named from the targets the new graph records.
  const Renames renames = retrace_names(g, {}, pass);
  changed |= !renames.empty();
  std::unordered_map<std::string, std::string> functions;
  for (Node n : g) {
    const std::string type = annotation(g, n, a, functions);
    if (type != n.type()) {
      n.set_type(type.empty() ? nullptr : type.c_str());
      changed = true;
    }
    changed |= clear_meta(n);
  }
  apply_retrace_names(g, renames);
  return changed;
}

Annotate annotate_options(const fxp::Options& options) {
  Annotate a;
  a.functionals = options.get_bool("annotate_functionals");
  a.modules = options.get_bool("annotate_modules");
  a.get_attrs = options.get_bool("annotate_get_attrs");
  return a;
}

}  // namespace

bool annotate_types_with_schema(Graph& g, const fxp::Options& options) {
  return transform(g, annotate_options(options), "annotate_types_with_schema",
                   /*remap=*/false, /*drop_kwargs=*/false);
}

bool normalize_operators(Graph& g, const fxp::Options& options) {
  return transform(g, Annotate{}, "normalize_operators", /*remap=*/true,
                   options.get_bool("drop_kwargs"));
}

}  // namespace fx_optimization
