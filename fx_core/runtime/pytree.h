// Pytrees of run-time values: torch 1.13's flattening of a graph's pytree
// inputs and unflattening of its outputs (fx_core/ir/pytree_codegen.h), on
// values as value.h holds them (lists, tuples, named tuples, GenericDicts).
//
// What forward does for a PyTreeCodeGen graph is what torch.fx's generated
// code does:
//   x_1, x_2, = fx_pytree.tree_flatten_spec([x], self._in_spec)
//   ...
//   return pytree.tree_unflatten([add], self._out_spec)
// so inputs are read through in_spec (a dict by the spec's keys, in the
// spec's order; a list, tuple or namedtuple by position, extra items
// ignored), not flattened by their own structure. (torch's Interpreter
// flattens with pytree.tree_flatten instead; for inputs of the spec's shape
// both give the same leaves.) Errors are FxError with torch's message:
// a missing key or index, an input of another kind than its spec, a type
// fx_pytree cannot flatten (OrderedDict, immutable_list, immutable_dict), a
// wrong argument or leaf count.
#ifndef FX_CORE_RUNTIME_PYTREE_H_
#define FX_CORE_RUNTIME_PYTREE_H_

#include <ATen/core/ivalue.h>

#include <vector>

#include "fx_core/ir/pytree_codegen.h"
#include "fx_core/ir/tree_spec.h"

namespace fx {

// torch.fx._pytree.tree_flatten_spec: the leaves of `tree` read through
// `spec`.
std::vector<c10::IValue> tree_flatten_spec(const c10::IValue& tree,
                                           const TreeSpec& spec);

// torch.utils._pytree.tree_unflatten: `spec` rebuilt with `leaves` (as many
// as spec.num_leaves()). Lists become typed lists when homogeneous
// (make_list), dicts GenericDicts, namedtuples named tuples of the spec's
// class (python_tuples.h).
c10::IValue tree_unflatten(std::vector<c10::IValue> leaves,
                           const TreeSpec& spec);

// forward's arguments (self not included) -> the placeholders' values, as
// the generated code's first line computes them.
std::vector<c10::IValue> flatten_pytree_inputs(const PyTreeInfo& info,
                                               std::vector<c10::IValue> inputs);

// The output node's value (the list of the output's leaves) -> what forward
// returns.
c10::IValue unflatten_pytree_output(const PyTreeInfo& info,
                                    const c10::IValue& output);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_PYTREE_H_
