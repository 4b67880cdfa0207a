#include "fx_core/partition/target_support.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// "NS::NAME[.OVL]" and "aten.NAME[.OVL]" -> "torch.ops.NS.NAME[.OVL]".
std::string canonical_op_overload(std::string_view target) {
  size_t colons = target.find("::");
  if (colons != std::string_view::npos && colons > 0 &&
      target.find('.') > colons) {
    return cat("torch.ops.", target.substr(0, colons), ".",
               target.substr(colons + 2));
  }
  if (starts_with(target, "aten.")) return cat("torch.ops.", target);
  return std::string(target);
}

// For "torch.ops.NS.NAME.OVL": "torch.ops.NS.NAME" (the packet), else "".
std::string op_packet(std::string_view canonical) {
  constexpr std::string_view kOps = "torch.ops.";
  if (!starts_with(canonical, kOps)) return "";
  size_t ns_end = canonical.find('.', kOps.size());
  if (ns_end == std::string_view::npos) return "";
  size_t name_end = canonical.find('.', ns_end + 1);
  if (name_end == std::string_view::npos) return "";
  return std::string(canonical.substr(0, name_end));
}

std::string_view strip_prefix(std::string_view s, std::string_view prefix) {
  return starts_with(s, prefix) ? s.substr(prefix.size()) : s;
}

}  // namespace

std::string canonical_function_target(std::string_view target) {
  if (starts_with(target, "_operator.")) {
    return cat("operator.", target.substr(10));
  }
  if (starts_with(target, "builtins.")) {
    return std::string(target.substr(9));
  }
  for (std::string_view prefix :
       {"torch._C._VariableFunctions.", "torch._C._VariableFunctionsClass.",
        "_VariableFunctionsClass."}) {
    if (starts_with(target, prefix)) {
      return cat("torch.", target.substr(prefix.size()));
    }
  }
  return canonical_op_overload(target);
}

std::string canonical_method_name(std::string_view name) {
  return std::string(strip_prefix(strip_prefix(name, "torch."), "Tensor."));
}

std::string canonical_module_type(std::string_view type) {
  constexpr std::string_view kModules = "torch.nn.modules.";
  if (!starts_with(type, kModules)) return std::string(type);
  size_t last = type.rfind('.');
  return cat("torch.nn.", type.substr(last + 1));
}

OperatorSupport target_support(const SupportedTargets& targets,
                               ModuleTypeFn module_type) {
  absl::flat_hash_set<std::string> functions, methods, modules;
  for (const std::string& f : targets.functions) {
    std::string c = canonical_function_target(f);
    if (starts_with(c, "torch.nn.functional.")) {
      functions.insert(cat("torch._C._nn.", c.substr(20)));
    }
    functions.insert(std::move(c));
  }
  for (const std::string& m : targets.methods) {
    methods.insert(canonical_method_name(m));
  }
  for (const std::string& t : targets.module_types) {
    modules.insert(canonical_module_type(t));
  }
  return OperatorSupport([functions = std::move(functions),
                          methods = std::move(methods),
                          modules = std::move(modules),
                          module_type = std::move(module_type)](const Node& n) {
    switch (n.op()) {
      case Opcode::kCallFunction: {
        std::string c = canonical_function_target(n.target());
        if (functions.contains(c)) return true;
        std::string packet = op_packet(c);
        return !packet.empty() && functions.contains(packet);
      }
      case Opcode::kCallMethod:
        return methods.contains(canonical_method_name(n.target()));
      case Opcode::kCallModule: {
        if (!module_type || modules.empty()) return false;
        std::string type = module_type(n);
        return !type.empty() && modules.contains(canonical_module_type(type));
      }
      default:
        return false;
    }
  });
}

}  // namespace fx
