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

namespace {

// Dotted Python names: "a", "a.b_1"; never empty atoms.
bool is_dotted_path(std::string_view path) {
  if (path.empty()) return false;
  bool atom_start = true;
  for (char c : path) {
    if (c == '.') {
      if (atom_start) return false;
      atom_start = true;
      continue;
    }
    bool letter = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    bool digit = c >= '0' && c <= '9';
    if (!letter && !(digit && !atom_start)) return false;
    atom_start = false;
  }
  return !atom_start;
}

}  // namespace

const ForeignAttribute& ForeignTargets::add_attribute(
    ForeignAttribute attribute) {
  if (!is_dotted_path(attribute.path)) {
    throw FxError(cat("ForeignTargets::add_attribute: '", attribute.path,
                      "' is not a qualified attribute name"));
  }
  auto it = attributes_.find(attribute.path);
  if (it != attributes_.end()) {
    if (it->second->handle == attribute.handle) return *it->second;
    throw FxError(cat("attribute '", attribute.path,
                      "' stands for two different objects (",
                      it->second->origin, ")"));
  }
  std::string path = attribute.path;
  auto entry = std::make_shared<const ForeignAttribute>(std::move(attribute));
  return *attributes_.emplace(std::move(path), std::move(entry)).first->second;
}

const ForeignAttribute* ForeignTargets::find_attribute(
    std::string_view path) const {
  if (attributes_.empty()) return nullptr;
  auto it = attributes_.find(path);
  return it == attributes_.end() ? nullptr : it->second.get();
}

bool ForeignTargets::has_attribute_within(std::string_view path) const {
  if (attributes_.empty()) return false;
  // The paths at or under `path` sort from `path` on.
  for (auto it = attributes_.lower_bound(path); it != attributes_.end(); ++it) {
    std::string_view p = it->first;
    if (p.substr(0, path.size()) != path) return false;
    if (p.size() == path.size() || p[path.size()] == '.') return true;
  }
  return false;
}

std::vector<const ForeignAttribute*> ForeignTargets::attributes() const {
  std::vector<const ForeignAttribute*> out;
  out.reserve(attributes_.size());
  for (const auto& [path, entry] : attributes_) out.push_back(entry.get());
  return out;
}

void ForeignTargets::merge(const ForeignTargets& other) {
  for (const auto& [k, entry] : other.entries_) entries_.emplace(k, entry);
  for (const auto& [k, entry] : other.attributes_) {
    attributes_.emplace(k, entry);
  }
}

ForeignTargets ForeignTargets::deepcopy() const {
  ForeignTargets out;
  out.entries_ = entries_;
  for (const auto& [path, entry] : attributes_) {
    if (!entry->copy) {
      out.attributes_.emplace(path, entry);
      continue;
    }
    ForeignAttribute copy = entry->copy(*entry);
    copy.path = path;
    if (!copy.copy) copy.copy = entry->copy;
    out.attributes_.emplace(path,
                            std::make_shared<const ForeignAttribute>(copy));
  }
  return out;
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
