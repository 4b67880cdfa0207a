#include "sdk_examples/list_codegen/list_codegen.h"

#include <ATen/core/ivalue.h>

#include "fx_core/support/error.h"

namespace sdk_examples {

std::unique_ptr<fx::CodeGen> ListCodeGen::clone() const {
  return std::make_unique<ListCodeGen>(*this);
}

// Python's f-string in the docs starts with a newline: kept.
std::string ListCodeGen::generate_prologue(
    std::vector<std::string> free_vars,
    std::string_view return_annotation) const {
  std::string vars;
  for (size_t i = 0; i < free_vars.size(); ++i) {
    vars += (i ? ", " : "") + free_vars[i];
  }
  return "\ndef forward(self, args_list: List[torch.Tensor])" +
         std::string(return_annotation) + ":\n    " + vars + " = args_list";
}

std::vector<std::pair<std::string, std::string>>
ListCodeGen::additional_globals() const {
  return {{"List", "typing.List"}};
}

std::vector<c10::IValue> ListCodeGen::process_inputs(
    std::vector<c10::IValue> inputs) const {
  if (inputs.size() != 1 || !inputs[0].isList()) {
    throw fx::FxError("ListCodeGen: forward takes one list of inputs");
  }
  return inputs[0].toList().vec();
}

}  // namespace sdk_examples
