// ModuleRegistry::global(): the process's registry, holding the built-in
// module kinds of this folder (builtin_modules.cc, functional_modules.cc,
// quantized_modules.cc) from its first use. The registry itself
// (module_registry.cc) knows no entries.
#include "fx_core/runtime/module_registry.h"

namespace fx {

ModuleRegistry& ModuleRegistry::global() {
  static ModuleRegistry* registry = [] {
    auto* r = new ModuleRegistry();
    register_builtin_modules(*r);
    register_functional_modules(*r);
    register_quantized_modules(*r);
    for (auto& kind : r->kinds_) kind->keeps_args = true;
    return r;
  }();
  return *registry;
}

}  // namespace fx
