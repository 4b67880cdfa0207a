// fx::OperatorEffects: what LibTorch's own operator declarations say a
// call_function / call_method target does besides computing its result,
// read from the ATen schemas and tags of the operator the target names
// (aten_target.h's declaring_operator: its spellings, and
// torch.nn.functional.NAME for aten::NAME):
//  - nondeterministic: tag nondeterministic_seeded (two calls with the same
//    arguments draw different random numbers: rand*, randn*, dropout,
//    bernoulli, normal, multinomial, uniform_, ...);
//  - mutates: a positional argument the schema marks as written (in-place
//    ops: add_, relu_, uniform_, copy_, ...; an `out=` argument does not
//    count, it is the caller's buffer).
// A spelling that names every overload (torch.ops.aten.NAME, torch.NAME, a
// method) has the union of its overloads' effects; an exact overload its
// own. A target that names no ATen operator has none: the Python-level
// functions with effects (operator.iadd, setitem, ...) are the caller's to
// know.
#ifndef FX_CORE_RUNTIME_ATEN_ATEN_EFFECTS_H_
#define FX_CORE_RUNTIME_ATEN_ATEN_EFFECTS_H_

#include <string_view>

#include "fx_core/ir/node.h"

namespace fx {

struct OperatorEffects {
  bool nondeterministic = false;
  bool mutates = false;
};

OperatorEffects operator_effects(Opcode op, std::string_view target);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_ATEN_ATEN_EFFECTS_H_
