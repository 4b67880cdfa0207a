#include "fx_core/partition/operator_support.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"

namespace fx {

OperatorSupport::OperatorSupport()
    : OperatorSupport([](const Node&) { return false; }) {}

OperatorSupport::OperatorSupport(Predicate predicate) {
  if (!predicate) predicate = [](const Node&) { return false; };
  predicate_ = std::make_shared<const Predicate>(std::move(predicate));
}

OperatorSupport all_of(std::vector<OperatorSupport> rules) {
  return OperatorSupport([rules = std::move(rules)](const Node& n) {
    return std::all_of(rules.begin(), rules.end(),
                       [&](const auto& r) { return r.is_node_supported(n); });
  });
}

OperatorSupport any_of(std::vector<OperatorSupport> rules) {
  return OperatorSupport([rules = std::move(rules)](const Node& n) {
    return std::any_of(rules.begin(), rules.end(),
                       [&](const auto& r) { return r.is_node_supported(n); });
  });
}

OperatorSupport negation(OperatorSupport rule) {
  return OperatorSupport([rule = std::move(rule)](const Node& n) {
    return !rule.is_node_supported(n);
  });
}

OperatorSupport opcode_support(std::vector<Opcode> opcodes) {
  return OperatorSupport([opcodes = std::move(opcodes)](const Node& n) {
    return std::find(opcodes.begin(), opcodes.end(), n.op()) != opcodes.end();
  });
}

OperatorSupport node_names_support(std::vector<std::string> names) {
  absl::flat_hash_set<std::string> set(names.begin(), names.end());
  return OperatorSupport([set = std::move(set)](const Node& n) {
    return set.contains(std::string(n.name()));
  });
}

}  // namespace fx
