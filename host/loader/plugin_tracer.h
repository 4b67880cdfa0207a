// A Tracer that follows the leaf-module rules plugins registered at load
// time (FxRegistrar's RegisterLeafModuleRule): a module is a leaf when the
// first rule with an opinion says so, given its Python type name (from the
// ModuleRegistry: "torch.nn.Conv2d", "my_vendor.FusedBlock") and qualified
// name; without an opinion, the default Tracer decides.
//
// Use it directly, or by name as the tracer policy "plugins" once
// register_plugin_tracer_policy() has run:
//   fx::host::PluginTracer tracer;
//   auto gm = fx::symbolic_trace(model, {}, &tracer);
#ifndef HOST_LOADER_PLUGIN_TRACER_H_
#define HOST_LOADER_PLUGIN_TRACER_H_

#include <string_view>

#include "fx_core/tracer/tracer.h"

namespace fx::host {

class PluginTracer : public Tracer {
 public:
  bool is_leaf_module(const torch::nn::Module& m,
                      std::string_view module_qualified_name) const override;
};

// Registers the "plugins" tracer policy (idempotent).
void register_plugin_tracer_policy();

}  // namespace fx::host

#endif  // HOST_LOADER_PLUGIN_TRACER_H_
