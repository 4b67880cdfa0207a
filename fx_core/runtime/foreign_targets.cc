#include "fx_core/runtime/foreign_targets.h"

#include <utility>

#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {

std::string ForeignTargets::key(Opcode op, std::string_view target) {
  return cat(opcode_name(op), ":", target);
}

const ForeignTarget& ForeignTargets::add(Opcode op, std::string_view target,
                                         std::string_view signature,
                                         OpKernel kernel,
                                         std::shared_ptr<void> handle,
                                         std::string origin) {
  if (op != Opcode::kCallFunction && op != Opcode::kCallMethod) {
    throw FxError(cat("ForeignTargets::add: '", target,
                      "': only call_function and call_method targets, not ",
                      opcode_name(op)));
  }
  if (!kernel) {
    throw FxError(cat("ForeignTargets::add: '", target, "' has no kernel"));
  }
  std::string k = key(op, target);
  auto it = entries_.find(k);
  if (it != entries_.end()) {
    if (it->second->handle == handle) return *it->second;
    throw FxError(cat(opcode_name(op), " target '", target,
                      "' stands for two different objects (",
                      it->second->origin, "): one graph cannot call both"));
  }
  auto entry = std::make_shared<ForeignTarget>();
  entry->def.op = op;
  entry->def.target = std::string(target);
  entry->def.schema = OpSchema::parse(signature);
  entry->def.kernel = std::move(kernel);
  entry->handle = std::move(handle);
  entry->origin = std::move(origin);
  return *entries_.emplace(std::move(k), std::move(entry)).first->second;
}

const ForeignTarget* ForeignTargets::find(Opcode op,
                                          std::string_view target) const {
  if (entries_.empty()) return nullptr;
  auto it = entries_.find(key(op, target));
  return it == entries_.end() ? nullptr : it->second.get();
}

const OpDef* ForeignTargets::resolve(Opcode op, std::string_view target) const {
  if (const ForeignTarget* entry = find(op, target)) return &entry->def;
  return OpRegistry::global().resolve(op, target);
}

const OpDef& ForeignTargets::get(Opcode op, std::string_view target) const {
  if (const OpDef* def = resolve(op, target)) return *def;
  throw FxError(no_kernel_message(op, target));
}

void ForeignTargets::merge(const ForeignTargets& other) {
  for (const auto& [k, entry] : other.entries_) entries_.emplace(k, entry);
}

std::vector<const ForeignTarget*> ForeignTargets::entries() const {
  std::vector<const ForeignTarget*> out;
  out.reserve(entries_.size());
  for (const auto& [k, entry] : entries_) out.push_back(entry.get());
  return out;
}

const OpDef* resolve_target(const ForeignTargets* foreign, Opcode op,
                            std::string_view target) {
  return foreign != nullptr ? foreign->resolve(op, target)
                            : OpRegistry::global().resolve(op, target);
}

}  // namespace fx
