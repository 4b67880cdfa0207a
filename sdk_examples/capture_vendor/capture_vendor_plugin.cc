// A vendor plugin shaping fx::make_fx's capture, registered when the plugin
// is loaded (C ABI version 4):
//
//  - a decomposition: aten::silu(self) is recorded as
//    mul.Tensor(self, sigmoid(self)), the vendor having a fast sigmoid but
//    no silu; written with the wrapper's graph-building calls, as a Python
//    decomposition_table entry would be written with torch.ops.aten;
//  - a leaf operator: aten::layer_norm, the vendor's fused kernel, stays one
//    node (make_fx would otherwise record native_layer_norm and getitems).
//
// Built from plugin_api/include alone.
#include "fx/plugin_api.hpp"

namespace {

// silu(self) = self * sigmoid(self): one placeholder per argument of
// aten::silu's schema (`Tensor self`).
fxp::OwnedGraph silu_replacement() {
  fxp::OwnedGraph g;
  fxp::Value self = g.placeholder("self");
  fxp::Value sigmoid =
      fxp::call(g.view(), "torch.ops.aten.sigmoid.default", {self});
  g.output(fxp::call(g.view(), "torch.ops.aten.mul.Tensor", {self, sigmoid}));
  return g;
}

void register_capture_extensions(fxp::Registrar& r) {
  r.decomposition("aten::silu", silu_replacement());
  r.leaf_op("aten::layer_norm");
}

}  // namespace

// No passes: the plugin only registers extensions.
extern "C" FX_PLUGIN_EXPORT const FxPluginInfo* fx_plugin_get_info(void) {
  static const fxp::PluginDef plugin(
      "capture_vendor", "1.0", {},
      &fxp::registration<register_capture_extensions>);
  return plugin.info();
}
