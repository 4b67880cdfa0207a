#include "fx_core/runtime/runtime_codegen.h"

#include <utility>

#include "fx_core/ir/pytree_codegen.h"
#include "fx_core/runtime/pytree.h"

namespace fx {

std::vector<c10::IValue> RuntimeCodeGen::process_inputs(
    std::vector<c10::IValue> inputs) const {
  return inputs;
}

c10::IValue RuntimeCodeGen::process_outputs(c10::IValue outputs) const {
  return outputs;
}

std::vector<c10::IValue> process_inputs(const CodeGen& codegen,
                                        std::vector<c10::IValue> inputs) {
  if (const PyTreeInfo* info = pytree_info(codegen)) {
    return flatten_pytree_inputs(*info, std::move(inputs));
  }
  const auto* hooks = dynamic_cast<const RuntimeCodeGen*>(&codegen);
  return hooks ? hooks->process_inputs(std::move(inputs)) : std::move(inputs);
}

c10::IValue process_outputs(const CodeGen& codegen, c10::IValue outputs) {
  if (const PyTreeInfo* info = pytree_info(codegen)) {
    return unflatten_pytree_output(*info, outputs);
  }
  const auto* hooks = dynamic_cast<const RuntimeCodeGen*>(&codegen);
  return hooks ? hooks->process_outputs(std::move(outputs))
               : std::move(outputs);
}

}  // namespace fx
