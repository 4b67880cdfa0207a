#include "fx_core/ir/pytree_codegen.h"

#include <utility>

#include "fx_core/ir/python_repr.h"
#include "fx_core/support/strings.h"

namespace fx {

std::unique_ptr<CodeGen> PyTreeCodeGen::clone() const {
  return std::make_unique<PyTreeCodeGen>(*this);
}

std::string PyTreeCodeGen::generate_prologue(
    std::vector<std::string> free_vars,
    std::string_view return_annotation) const {
  // As torch's gen_fn_def: the signature is orig_args (self added when
  // missing); the flattened names take self back first when it is there.
  const std::vector<std::string>& function_args = info_.orig_args;
  if (info_.has_self()) free_vars.insert(free_vars.begin(), "self");
  std::string definition =
      CodeGen::generate_prologue(function_args, return_annotation);
  if (!free_vars.empty()) {
    append(&definition, "\n    ", join(free_vars, ", "),
           ", = fx_pytree.tree_flatten_spec([", join(function_args, ", "),
           "], self._in_spec)");
  }
  return definition;
}

std::string PyTreeCodeGen::generate_output(const Argument& output_args) const {
  return cat("return pytree.tree_unflatten(", repr(output_args),
             ", self._out_spec)");
}

const PyTreeInfo* pytree_info(const CodeGen& codegen) {
  const auto* pytree = dynamic_cast<const PyTreeCodeGen*>(&codegen);
  return pytree ? &pytree->pytree_info() : nullptr;
}

}  // namespace fx
