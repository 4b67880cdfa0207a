#include "fx_core/runtime/runtime_codegen.h"

#include <utility>

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
  const auto* hooks = dynamic_cast<const RuntimeCodeGen*>(&codegen);
  return hooks ? hooks->process_inputs(std::move(inputs)) : std::move(inputs);
}

c10::IValue process_outputs(const CodeGen& codegen, c10::IValue outputs) {
  const auto* hooks = dynamic_cast<const RuntimeCodeGen*>(&codegen);
  return hooks ? hooks->process_outputs(std::move(outputs))
               : std::move(outputs);
}

}  // namespace fx
