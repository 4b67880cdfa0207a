// The FxApi entry of version 12 that reads LibTorch's declarations:
// OperatorSchemas (an operator's schemas as torch prints them, for a target
// resolved as NodeOperatorEffects resolves it; fx_core/runtime/aten/
// aten_schemas.h). Version 12's ValueStorage is with the other Value*
// entries (runtime_api.cc).
#include <string>
#include <string_view>
#include <utility>

#include "fx_core/runtime/aten/aten_schemas.h"
#include "plugin_api/capi/api_internal.h"

namespace fx::host::internal {

void fill_schema_entries(FxApi& t) {
  t.OperatorSchemas = [](const char* target, FxArg** out) {
    return guarded("OperatorSchemas", [&] {
      require(target, "target");
      require(out, "out");
      // A call_function target is qualified (torch.add, operator.add,
      // builtins.getattr); a call_method target is a bare method name.
      const std::string_view spelling = target;
      const Opcode op = spelling.find('.') == std::string_view::npos
                            ? Opcode::kCallMethod
                            : Opcode::kCallFunction;
      ArgumentList schemas;
      for (std::string& s : operator_schemas(op, spelling)) {
        schemas.emplace_back(std::move(s));
      }
      *out = give(Argument::list(std::move(schemas)));
    });
  };
}

}  // namespace fx::host::internal
