#include "plugins/optimization/retrace.h"

#include <string>
#include <unordered_set>
#include <vector>

namespace fx_optimization {
namespace {

constexpr uint32_t kRenamingVersion = 11;

}  // namespace

Renames retrace_names(const fxp::Graph& g,
                      const std::unordered_set<FxNode*>& removed,
                      const std::string& pass) {
  Renames renames;
  fxp::OwnedGraph scratch;
  for (fxp::Node n : g) {
    if (removed.count(n.get()) != 0) continue;
    // A placeholder is named from its target, the output "output".
    const bool named_by_target =
        n.op() == FX_OP_PLACEHOLDER || n.op() == FX_OP_OUTPUT;
    fxp::Node fresh =
        scratch.view().create_node(n.op(), n.target_cstr(), {}, {},
                                   named_by_target ? n.target_cstr() : nullptr);
    if (fresh.name() == n.name()) continue;
    if (fxp::api()->version < kRenamingVersion) {
      throw fxp::Error(FX_FAILED_PRECONDITION,
                       pass + ": torch's retrace would name node '" +
                           std::string(n.name()) + "' '" +
                           std::string(fresh.name()) +
                           "', and this host cannot rename nodes (C ABI "
                           "version 11, GraphRenameNodes)");
    }
    renames.emplace_back(n, std::string(fresh.name()));
  }
  return renames;
}

std::vector<fxp::Node> untraced_calls(const fxp::Graph& g,
                                      const std::string& pass) {
  std::vector<fxp::Node> out;
  for (fxp::Node n : g) {
    if (n.op() != FX_OP_CALL_FUNCTION || !n.all_input_nodes().empty()) {
      continue;
    }
    if (n.num_users() != 0) {
      throw fxp::Error(FX_FAILED_PRECONDITION,
                       pass + ": node '" + std::string(n.name()) +
                           "' reads no node, so torch's retrace runs it and "
                           "makes its value a constant attribute, which "
                           "this pass does not do");
    }
    out.push_back(n);
  }
  return out;
}

std::vector<std::string> fresh_graph_names(
    const std::vector<FreshNode>& nodes) {
  fxp::OwnedGraph scratch;
  fxp::Graph s = scratch.view();
  std::vector<std::string> names;
  for (const FreshNode& n : nodes) {
    names.emplace_back(s.create_node(n.op, n.target.c_str(), {}, {},
                                     n.name.empty() ? nullptr : n.name.c_str())
                           .name());
  }
  names.emplace_back(s.create_node(FX_OP_OUTPUT, "output").name());
  return names;
}

void apply_fresh_graph_names(fxp::Graph& g,
                             const std::vector<std::string>& names) {
  Renames renames;
  size_t i = 0;
  for (fxp::Node n : g) {
    if (n.name() != names[i]) renames.emplace_back(n, names[i]);
    ++i;
  }
  apply_retrace_names(g, renames);
}

bool clear_traced_types(fxp::Graph& g) {
  bool changed = false;
  for (fxp::Node n : g) {
    if (n.op() == FX_OP_PLACEHOLDER || n.op() == FX_OP_OUTPUT) continue;
    if (n.type().empty()) continue;
    n.set_type(nullptr);
    changed = true;
  }
  return changed;
}

bool wrapped_in_code(const fxp::Node& n) {
  if (n.op() != FX_OP_CALL_FUNCTION) return false;
  fxp::ArgView flag = n.meta("is_wrapped");
  if (flag) return flag.kind() == FX_ARG_BOOL && flag.as_bool();
  const std::string target(n.target());
  auto starts = [&](const char* prefix) {
    return target.rfind(prefix, 0) == 0;
  };
  return !(starts("torch.") || starts("operator.") || starts("_operator.") ||
           target == "builtins.getattr");
}

bool unwrap(fxp::Node& n) {
  if (!wrapped_in_code(n)) return false;
  n.set_meta("is_wrapped", fxp::Arg(false));
  return true;
}

bool symbolic_retrace(fxp::Graph& g, const std::string& pass) {
  const std::vector<fxp::Node> untraced = untraced_calls(g, pass);
  std::unordered_set<FxNode*> removed;
  for (const fxp::Node& n : untraced) removed.insert(n.get());
  const Renames renames = retrace_names(g, removed, pass);
  for (fxp::Node n : untraced) g.erase_node(n);
  apply_retrace_names(g, renames);
  const bool retyped = clear_traced_types(g);
  return retyped || !renames.empty() || !untraced.empty();
}

void require_renaming(const std::string& pass) {
  if (fxp::api()->version >= kRenamingVersion) return;
  throw fxp::Error(FX_FAILED_PRECONDITION,
                   pass +
                       ": this host cannot rename nodes (C ABI version 11, "
                       "GraphRenameNodes)");
}

void apply_retrace_names(fxp::Graph& g, const Renames& renames) {
  if (fxp::api()->version < kRenamingVersion) return;
  if (!renames.empty()) g.rename_nodes(renames);
  g.reset_namespace();
}

}  // namespace fx_optimization
