#include "fx_core/runtime/python_declarations.h"

#include <string_view>

#include "absl/container/flat_hash_map.h"

namespace fx {
namespace {

struct Row {
  std::string_view key;
  char kind;  // 'b', 'p', 'v' (PythonFunctionKind) or 'r' (annotation)
  std::string_view text;
};

constexpr Row kRows[] = {
#include "fx_core/runtime/python_declarations.inc"
};

using Table = absl::flat_hash_map<std::string_view, std::string_view>;

const Table& table_of(char kind) {
  static const auto* tables = [] {
    auto* t = new absl::flat_hash_map<char, Table>();
    for (const Row& row : kRows) (*t)[row.kind][row.key] = row.text;
    return t;
  }();
  static const Table kEmpty;
  const auto it = tables->find(kind);
  return it == tables->end() ? kEmpty : it->second;
}

}  // namespace

PythonFunctionKind python_function_kind(std::string_view target) {
  if (table_of('v').contains(target)) {
    return PythonFunctionKind::kNotNormalizable;
  }
  if (table_of('b').contains(target)) return PythonFunctionKind::kBuiltin;
  if (table_of('p').contains(target)) {
    return PythonFunctionKind::kPythonFunction;
  }
  return PythonFunctionKind::kUnlisted;
}

std::optional<std::string_view> python_return_annotation(
    std::string_view target_or_module_type) {
  const Table& annotations = table_of('r');
  const auto it = annotations.find(target_or_module_type);
  if (it == annotations.end()) return std::nullopt;
  return it->second;
}

}  // namespace fx
