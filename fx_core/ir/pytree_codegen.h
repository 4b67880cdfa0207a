// fx::PyTreeCodeGen: torch 1.13's _PyTreeCodeGen, the code generator of a
// graph whose inputs or outputs are pytrees (tree_spec.h).
//
// torch.fx installs it when symbolic_trace's concrete_args hold containers
// with torch.fx.PH leaves, and for make_fx of a function taking nested
// inputs: each leaf becomes a placeholder (`x_1`, `x_2`) and the output node
// returns the list of the output's leaves. PyTreeInfo (torch's _PyTreeInfo)
// says how to get from the caller's arguments to the placeholders and from
// the output's leaves back to the value forward returns:
//   orig_args  the traced function's parameter names ("self" first for a
//              module's forward), which forward takes;
//   in_spec    the tuple of those arguments' TreeSpec;
//   out_spec   the output's TreeSpec (std::nullopt: not recorded, and
//              forward then fails as torch.fx's does).
// The code, byte-identical to torch.fx's:
//   def forward(self, x, y):
//       x_1, x_2, y_1, = fx_pytree.tree_flatten_spec([x, y], self._in_spec)
//       ...
//       return pytree.tree_unflatten([add, mul], self._out_spec)
// The run-time flattening and unflattening (torch's process_inputs /
// process_outputs and what the code does) need LibTorch values: they are in
// fx_core/runtime/pytree.h, applied by runtime_codegen.h's process_inputs /
// process_outputs to every graph whose codegen is a PyTreeCodeGen.
#ifndef FX_CORE_IR_PYTREE_CODEGEN_H_
#define FX_CORE_IR_PYTREE_CODEGEN_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fx_core/ir/codegen.h"
#include "fx_core/ir/tree_spec.h"

namespace fx {

struct PyTreeInfo {
  std::vector<std::string> orig_args;
  TreeSpec in_spec;
  std::optional<TreeSpec> out_spec;

  // True when orig_args starts with "self" (a module's forward).
  bool has_self() const { return !orig_args.empty() && orig_args[0] == "self"; }
  friend bool operator==(const PyTreeInfo& a, const PyTreeInfo& b) {
    return a.orig_args == b.orig_args && a.in_spec == b.in_spec &&
           a.out_spec == b.out_spec;
  }
};

class PyTreeCodeGen : public CodeGen {
 public:
  explicit PyTreeCodeGen(PyTreeInfo info) : info_(std::move(info)) {}

  const PyTreeInfo& pytree_info() const { return info_; }

  std::unique_ptr<CodeGen> clone() const override;
  // `def forward(self, ORIG_ARGS):` and, when the graph has placeholders,
  // the line that flattens the arguments into them.
  std::string generate_prologue(
      std::vector<std::string> free_vars,
      std::string_view return_annotation) const override;
  // `return pytree.tree_unflatten(OUTPUT, self._out_spec)`.
  std::string generate_output(const Argument& output_args) const override;

 private:
  PyTreeInfo info_;
};

// The graph's PyTreeInfo when its codegen is a PyTreeCodeGen, else nullptr.
const PyTreeInfo* pytree_info(const CodeGen& codegen);

}  // namespace fx

#endif  // FX_CORE_IR_PYTREE_CODEGEN_H_
