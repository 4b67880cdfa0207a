#include "fx_core/runtime/aten/aten_schemas.h"

#include <torch/csrc/jit/runtime/operator.h>

#include <memory>
#include <optional>
#include <sstream>

#include "fx_core/runtime/aten/aten_target.h"

namespace fx {
namespace {

// str(schema) in Python: FunctionSchema's operator<<.
std::string schema_text(const c10::FunctionSchema& schema) {
  std::ostringstream out;
  out << schema;
  return out.str();
}

}  // namespace

std::vector<std::string> operator_schemas(Opcode op, std::string_view target) {
  std::optional<AtenTarget> t = declaring_operator(op, target);
  if (!t) return {};
  // What torch._C._jit_get_schemas_for_operator and torch.ops resolve
  // through: the registry's operators of that name, in registration order.
  const auto& operators =
      torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(t->name));
  std::vector<std::string> schemas;
  for (const std::shared_ptr<torch::jit::Operator>& o : operators) {
    const c10::FunctionSchema& schema = o->schema();
    if (!t->exact_overload) {
      schemas.push_back(schema_text(schema));
    } else if (schema.overload_name() == t->overload) {
      // torch.ops.NS.NAME.OVERLOAD is the first operator with that
      // overload name (torch._C._get_operation_overload).
      return {schema_text(schema)};
    }
  }
  return schemas;
}

}  // namespace fx
