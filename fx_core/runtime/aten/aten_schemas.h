// fx::operator_schemas: the schemas of the operator a call_function /
// call_method target names (aten_target.h's declaring_operator, the
// resolution operator_effects uses), each as torch prints str(op._schema):
//
//   operator_schemas(Opcode::kCallFunction, "torch.ops.aten.diagonal.default")
//     == {"aten::diagonal(Tensor(a) self, int offset=0, int dim1=0, "
//         "int dim2=1) -> Tensor(a)"}
//
// A spelling that names one overload (torch.ops.NS.NAME.OVERLOAD, "default"
// for the unnamed one) gives that overload's schema, or none when LibTorch
// has no such overload. A spelling that names every overload
// (torch.ops.NS.NAME, torch.NAME, torch.nn.functional.NAME, a Tensor method
// NAME) gives every schema of NS::NAME in the order
// torch._C._jit_get_schemas_for_operator("NS::NAME") lists them: LibTorch's
// operator registry, TorchScript-only overloads (aten::add.int, ...) and
// out= variants included. A target that names no operator gives none.
// Threads: safe from any thread.
#ifndef FX_CORE_RUNTIME_ATEN_ATEN_SCHEMAS_H_
#define FX_CORE_RUNTIME_ATEN_ATEN_SCHEMAS_H_

#include <string>
#include <string_view>
#include <vector>

#include "fx_core/ir/node.h"

namespace fx {

std::vector<std::string> operator_schemas(Opcode op, std::string_view target);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_ATEN_ATEN_SCHEMAS_H_
