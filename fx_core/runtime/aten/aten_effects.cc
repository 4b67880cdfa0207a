#include "fx_core/runtime/aten/aten_effects.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/enum_tag.h>

#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "fx_core/runtime/aten/aten_target.h"

namespace fx {
namespace {

OperatorEffects effects_of(const c10::OperatorHandle& op) {
  OperatorEffects e;
  e.nondeterministic = op.hasTag(at::Tag::nondeterministic_seeded);
  if (!op.hasSchema()) return e;
  for (const c10::Argument& arg : op.schema().arguments()) {
    if (arg.kwarg_only()) continue;
    const c10::AliasInfo* alias = arg.alias_info();
    e.mutates = e.mutates || (alias != nullptr && alias->isWrite());
  }
  return e;
}

// The union of the effects of every overload of each ATen operator name,
// computed once from the dispatcher's registrations.
const absl::flat_hash_map<std::string, OperatorEffects>& effects_by_name() {
  static const auto* index = [] {
    auto* all = new absl::flat_hash_map<std::string, OperatorEffects>();
    c10::Dispatcher& dispatcher = c10::Dispatcher::singleton();
    for (const c10::OperatorName& name : dispatcher.getAllOpNames()) {
      auto op = dispatcher.findOp(name);
      if (!op) continue;
      OperatorEffects e = effects_of(*op);
      OperatorEffects& u = (*all)[name.name];
      u.nondeterministic = u.nondeterministic || e.nondeterministic;
      u.mutates = u.mutates || e.mutates;
    }
    return all;
  }();
  return *index;
}

OperatorEffects effects_of(const AtenTarget& t) {
  if (t.exact_overload) {
    auto op = c10::Dispatcher::singleton().findOp({t.name, t.overload});
    return op ? effects_of(*op) : OperatorEffects{};
  }
  const auto& index = effects_by_name();
  auto it = index.find(t.name);
  return it == index.end() ? OperatorEffects{} : it->second;
}

}  // namespace

OperatorEffects operator_effects(Opcode op, std::string_view target) {
  std::optional<AtenTarget> t = declaring_operator(op, target);
  return t ? effects_of(*t) : OperatorEffects{};
}

}  // namespace fx
