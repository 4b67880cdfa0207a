// fx::AtenTarget: which ATen operator a call_function / call_method target
// names, for the spellings torch.fx records.
//
//   call_function torch.NAME                  aten::NAME
//   call_function torch._C._nn.NAME           aten::NAME  (torch.nn.functional
//                 torch._C._linalg.NAME                    builtins, linalg_*,
//                 torch._C._special.NAME                   special_*, fft_*:
//                 torch._C._fft.NAME, torch._C._sparse.NAME,
//                 torch._C._nested.NAME                    NAME is the ATen
//                 name)
//   call_function torch.ops.aten.NAME         aten::NAME, every overload
//   call_function torch.ops.aten.NAME.OVL     aten::NAME, overload OVL only
//                                             ("default" is the unnamed one)
//   call_function torch.ops.NS.NAME[.OVL]     NS::NAME likewise: any
//                                             namespace LibTorch registers
//                                             operators in (quantized,
//                                             prims, a custom op library)
//   call_method   NAME, NAME_                 aten::NAME / aten::NAME_, with
//                                             args[0] as `self`
//
// Only the spelling is checked here; whether LibTorch has such an operator
// is AtenOp's question. Python functions that are not ATen bindings
// (torch.nn.functional.relu, torch.functional.*) are not ATen targets.
#ifndef FX_CORE_RUNTIME_ATEN_ATEN_TARGET_H_
#define FX_CORE_RUNTIME_ATEN_ATEN_TARGET_H_

#include <optional>
#include <string>
#include <string_view>

#include "fx_core/ir/node.h"

namespace fx {

struct AtenTarget {
  std::string name;      // qualified: "aten::std"
  std::string overload;  // with exact_overload: "dim", or "" for default
  bool exact_overload = false;
  bool method = false;  // call_method: the receiver is args[0]
  // torch.ops.*: results as the operator returns them (plain tuples,
  // not Python's torch.return_types).
  bool ops_namespace = false;
  std::string python_name;  // for messages: "std", "linalg_det"
};

// The ATen operator `target` names, or std::nullopt when the spelling names
// none (another module's function, a name that is not an identifier).
std::optional<AtenTarget> aten_target(Opcode op, std::string_view target);

// The operator whose declarations (schemas, tags) describe a call of
// `target`: aten_target's, and for call_function torch.nn.functional.NAME
// aten::NAME, since most functional ops are thin Python wrappers of the ATen
// operator of the same name (dropout, alpha_dropout, rrelu, ...). What
// operator_effects (aten_effects.h) and operator_schemas (aten_schemas.h)
// read; not a spelling AtenOp calls.
std::optional<AtenTarget> declaring_operator(Opcode op,
                                             std::string_view target);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_ATEN_ATEN_TARGET_H_
