#include "fx_core/runtime/aten/aten_target.h"

#include <array>

#include "fx_core/support/strings.h"

namespace fx {
namespace {

bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

bool consume_prefix(std::string_view* s, std::string_view prefix) {
  if (s->substr(0, prefix.size()) != prefix) return false;
  s->remove_prefix(prefix.size());
  return true;
}

AtenTarget named(std::string_view name) {
  AtenTarget t;
  t.name = cat("aten::", name);
  t.python_name = std::string(name);
  return t;
}

// torch.ops.NAMESPACE.NAME[.OVERLOAD], `rest` after "torch.ops.".
std::optional<AtenTarget> ops_namespace(std::string_view rest) {
  size_t ns_dot = rest.find('.');
  if (ns_dot == std::string_view::npos) return std::nullopt;
  std::string_view ns = rest.substr(0, ns_dot);
  if (!is_identifier(ns)) return std::nullopt;
  rest.remove_prefix(ns_dot + 1);
  size_t dot = rest.find('.');
  std::string_view name = rest.substr(0, dot);
  if (!is_identifier(name)) return std::nullopt;
  AtenTarget t = named(name);
  t.name = cat(ns, "::", name);
  t.ops_namespace = true;
  if (dot == std::string_view::npos) return t;
  std::string_view overload = rest.substr(dot + 1);
  if (!is_identifier(overload)) return std::nullopt;
  t.exact_overload = true;
  t.overload = overload == "default" ? "" : std::string(overload);
  return t;
}

}  // namespace

std::optional<AtenTarget> aten_target(Opcode op, std::string_view target) {
  if (op == Opcode::kCallMethod) {
    if (!is_identifier(target) || target.substr(0, 2) == "__") {
      return std::nullopt;
    }
    AtenTarget t = named(target);
    t.method = true;
    return t;
  }
  if (op != Opcode::kCallFunction) return std::nullopt;
  std::string_view rest = target;
  if (consume_prefix(&rest, "torch.ops.")) return ops_namespace(rest);
  static constexpr std::array<std::string_view, 6> kBindingModules = {
      "torch._C._nn.",  "torch._C._linalg.", "torch._C._special.",
      "torch._C._fft.", "torch._C._sparse.", "torch._C._nested."};
  for (std::string_view module : kBindingModules) {
    std::string_view name = rest;
    if (consume_prefix(&name, module) && is_identifier(name)) {
      return named(name);
    }
  }
  if (consume_prefix(&rest, "torch.") && is_identifier(rest) &&
      rest.substr(0, 1) != "_") {
    return named(rest);
  }
  return std::nullopt;
}

std::optional<AtenTarget> declaring_operator(Opcode op,
                                             std::string_view target) {
  std::optional<AtenTarget> t = aten_target(op, target);
  if (t || op != Opcode::kCallFunction) return t;
  constexpr std::string_view kPrefix = "torch.nn.functional.";
  if (target.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  return aten_target(Opcode::kCallFunction,
                     cat("torch.", target.substr(kPrefix.size())));
}

}  // namespace fx
