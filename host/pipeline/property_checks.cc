#include "host/pipeline/property_checks.h"

#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "fx_core/ir/node.h"
#include "fx_core/support/strings.h"

namespace fx::host {
namespace {

absl::Status check_tensor_meta(const Graph& graph) {
  for (const Node* node : graph.nodes()) {
    if (node->op() == Opcode::kOutput) continue;
    const Argument* type = node->meta_value("type");
    if (type == nullptr) {
      return absl::FailedPreconditionError(
          cat("node '", node->name(), "' has no meta['type']"));
    }
    if (type->is_string() && type->as_string() == "torch.Tensor" &&
        node->meta_value("tensor_meta") == nullptr) {
      return absl::FailedPreconditionError(
          cat("node '", node->name(),
              "' is a torch.Tensor but has no meta['tensor_meta']"));
    }
  }
  return absl::OkStatus();
}

struct Checks {
  std::mutex mutex;
  absl::flat_hash_map<std::string, PropertyCheck> by_property{
      {"tensor_meta", check_tensor_meta}};
};

Checks& checks() {
  static auto* c = new Checks();
  return *c;
}

}  // namespace

void register_property_check(std::string property, PropertyCheck check) {
  Checks& c = checks();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.by_property[std::move(property)] = std::move(check);
}

absl::Status check_property(std::string_view property, const Graph& graph) {
  PropertyCheck check;
  {
    Checks& c = checks();
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.by_property.find(std::string(property));
    if (it == c.by_property.end()) return absl::OkStatus();
    check = it->second;
  }
  return check(graph);
}

}  // namespace fx::host
