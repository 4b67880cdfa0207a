// OpRegistry::global(): the process's registry, holding the built-in op
// families of this folder (builtin_ops.h) from its first use. The registry
// itself (op_registry.cc) knows no entries.
#include "fx_core/runtime/ops/builtin_ops.h"

#include "fx_core/runtime/op_registry.h"

namespace fx {

OpRegistry& OpRegistry::global() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    register_builtin_ops(*r);
    for (auto& def : r->defs_) def->keeps_args = true;  // none moves its args
    return r;
  }();
  return *registry;
}

void register_builtin_ops(OpRegistry& registry) {
  ops::register_python_ops(registry);
  ops::register_torch_ops(registry);
  ops::register_functional_ops(registry);
  ops::register_torchvision_ops(registry);
  ops::register_inference_ops(registry);
  ops::register_python_wrapper_ops(registry);
  ops::register_masked_ops(registry);
  ops::register_loss_ops(registry);
  ops::register_nn_functional_wrapper_ops(registry);
  ops::register_torch_functional_ops(registry);
}

}  // namespace fx
