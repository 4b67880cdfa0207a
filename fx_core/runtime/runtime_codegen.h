// fx::RuntimeCodeGen: torch.fx's two runtime hooks of a CodeGen.
//
// torch.fx's CodeGen has, besides the text it generates, `process_inputs`
// (the caller's inputs -> the graph's placeholders) and `process_outputs`
// (the output node's value -> what the caller gets). The IR's fx::CodeGen
// only produces text and knows nothing of LibTorch, so the hooks live here:
// a code generator that needs them derives from RuntimeCodeGen instead of
// CodeGen, and every runtime that runs a graph (GraphModule::forward, the
// Interpreter, InferencePlan) applies them through the two free functions
// below. A plain CodeGen behaves as torch.fx's default: both are identity;
// a PyTreeCodeGen (fx_core/ir/pytree_codegen.h) flattens and unflattens
// through its specs (pytree.h).
#ifndef FX_CORE_RUNTIME_RUNTIME_CODEGEN_H_
#define FX_CORE_RUNTIME_RUNTIME_CODEGEN_H_

#include <ATen/core/ivalue.h>

#include <vector>

#include "fx_core/ir/codegen.h"

namespace fx {

class RuntimeCodeGen : public CodeGen {
 public:
  // Defaults: identity.
  virtual std::vector<c10::IValue> process_inputs(
      std::vector<c10::IValue> inputs) const;
  virtual c10::IValue process_outputs(c10::IValue outputs) const;
};

// `codegen`'s hooks when it is a RuntimeCodeGen, pytree.h's flattening and
// unflattening for a PyTreeCodeGen, identity otherwise.
std::vector<c10::IValue> process_inputs(const CodeGen& codegen,
                                        std::vector<c10::IValue> inputs);
c10::IValue process_outputs(const CodeGen& codegen, c10::IValue outputs);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_RUNTIME_CODEGEN_H_
