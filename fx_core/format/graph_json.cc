// The fx-graph JSON format's shared names (docs/fx-graph-json.md): the
// weight kinds' spellings, which call_function targets a file wraps by
// default, and where a graph file's weights are. Reading is in
// graph_json_reader.cc, writing in graph_json_writer.cc.
#include "fx_core/format/graph_json.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "fx_core/format/graph_json_internal.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

constexpr std::pair<WeightKind, std::string_view> kWeightKindNames[] = {
    {WeightKind::kParameter, "parameter"},
    {WeightKind::kFrozenParameter, "frozen_parameter"},
    {WeightKind::kBuffer, "buffer"},
    {WeightKind::kNonPersistentBuffer, "non_persistent_buffer"},
    {WeightKind::kTensor, "tensor"},
};

}  // namespace

std::optional<WeightKind> parse_weight_kind(std::string_view name) {
  for (const auto& [kind, n] : kWeightKindNames) {
    if (n == name) return kind;
  }
  return std::nullopt;
}

std::string_view weight_kind_name(WeightKind kind) {
  for (const auto& [k, name] : kWeightKindNames) {
    if (k == kind) return name;
  }
  return "";
}

bool is_wrapped_by_default(std::string_view target) {
  auto starts = [&](std::string_view p) {
    return target.substr(0, p.size()) == p;
  };
  return !(starts("torch.") || starts("operator.") || starts("_operator.") ||
           target == "builtins.getattr");
}

std::string weights_path(const GraphFile& file) {
  if (file.weights.empty() || file.weights[0] == '/') return file.weights;
  return cat(file.directory, "/", file.weights);
}

}  // namespace fx
