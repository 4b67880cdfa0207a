/* A plugin whose library constructor leaves a trace (an environment
 * variable): the loader test uses it to prove that a plugin refused for its
 * pinned hash never had any of its code run. */
#include <stdlib.h>

#include "fx/plugin_api.h"

__attribute__((constructor)) static void mark_loaded(void) {
  setenv("FX_SIDE_EFFECT_PLUGIN_LOADED", "1", 1);
}

static const FxPluginInfo kPlugin = {"side_effect_plugin",
                                     "1.0",
                                     FX_API_VERSION,
                                     FX_API_VERSION,
                                     NULL,
                                     0,
                                     NULL,
                                     sizeof(FxPluginInfo),
                                     sizeof(FxPassInfo)};

FX_PLUGIN_EXPORT const FxPluginInfo* fx_plugin_get_info(void) {
  return &kPlugin;
}
