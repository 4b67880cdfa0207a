// fuse_window_attention (libfx_inference.so): Swin Transformer's windowed
// attention, torchvision's shifted_window_attention (one call in a traced
// model: torchvision marks it with torch.fx.wrap), becomes
// fx_inference.window_attention, the same function under the name the
// InferencePlan binds (fx_core/compile/window_attention.h: the window
// partition as one gather, the qkv and proj linears with packed weights,
// softmax(q @ k^T * scale + bias + mask) @ v fused per window and head).
// Arguments, keywords and meta stay as they are: the rename changes no
// number in graph mode (no tolerance to declare).
#include "fx/plugin_api.hpp"
#include "plugins/inference/passes.h"

namespace fx_inference {

bool fuse_window_attention(fxp::Graph& g, const fxp::Options&) {
  bool changed = false;
  for (fxp::Node n : g.find_nodes(
           FX_OP_CALL_FUNCTION,
           "torchvision.models.swin_transformer.shifted_window_attention")) {
    n.set_target("torch.ops.fx_inference.window_attention");
    changed = true;
  }
  return changed;
}

}  // namespace fx_inference
