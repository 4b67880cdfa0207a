// fx::target_support: support declared by target, as torch.fx's
// OperatorSupport declares it by `get_node_target` (its support dict's keys).
//
// Three lists, one per callable opcode:
//   functions     call_function targets, in any of torch's spellings:
//                   operator.add = _operator.add
//                   torch.ops.aten.add = aten::add = aten.add (every
//                     overload); torch.ops.aten.add.Tensor = aten::add.Tensor
//                     (that overload only); likewise torch.ops.NS.* = NS::*
//                   torch.nn.functional.linear also names torch._C._nn.linear
//                     (what F.linear is)
//                   torch._C._VariableFunctions.relu = torch.relu
//                   builtins.getattr = getattr
//   methods       call_method names: add = Tensor.add = torch.Tensor.add
//   module_types  call_module modules' Python types: torch.nn.Conv2d =
//                 torch.nn.modules.conv.Conv2d
// A spelling that fits none of these forms is matched exactly.
//
// Unlike torch.fx's OperatorSupport, placeholder, get_attr and output nodes
// are not supported (torch.fx says yes to every non-callable node, which puts
// placeholders and the output into partitions); add opcode_support for
// get_attr to let partitions read attributes.
#ifndef FX_CORE_PARTITION_TARGET_SUPPORT_H_
#define FX_CORE_PARTITION_TARGET_SUPPORT_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "fx_core/partition/operator_support.h"

namespace fx {

struct SupportedTargets {
  std::vector<std::string> functions;
  std::vector<std::string> methods;
  std::vector<std::string> module_types;
};

// The Python type of the module a call_module node calls ("torch.nn.Conv2d"),
// or "" when there is none (typically looked up in the module that owns the
// node's graph). Throws FxError when it cannot tell.
using ModuleTypeFn = std::function<std::string(const Node& call_module)>;

// Nodes whose target is listed. call_module nodes need `module_type` (without
// it, or when it returns "", they are not supported).
OperatorSupport target_support(const SupportedTargets& targets,
                               ModuleTypeFn module_type = {});

// The canonical form of each spelling above (exposed for tests and messages):
// "aten::add.Tensor" -> "torch.ops.aten.add.Tensor", "_operator.add" ->
// "operator.add", "torch.nn.modules.conv.Conv2d" -> "torch.nn.Conv2d".
std::string canonical_function_target(std::string_view target);
std::string canonical_method_name(std::string_view name);
std::string canonical_module_type(std::string_view type);

}  // namespace fx

#endif  // FX_CORE_PARTITION_TARGET_SUPPORT_H_
