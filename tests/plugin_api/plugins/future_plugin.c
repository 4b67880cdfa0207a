/* A plugin that needs a newer host than this one: the loader must refuse it
 * with the versions and the fix in the message. */
#include <stddef.h>

#include "fx/plugin_api.h"

static const FxPluginInfo kPlugin = {"future_plugin",
                                     "9.0",
                                     FX_API_VERSION + 1,
                                     FX_API_VERSION + 1,
                                     NULL,
                                     0,
                                     NULL};

FX_PLUGIN_EXPORT const FxPluginInfo* fx_plugin_get_info(void) {
  return &kPlugin;
}
