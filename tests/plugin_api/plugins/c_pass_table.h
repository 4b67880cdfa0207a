/* The pass table of a C test plugin whose passes take no options and
 * declare nothing: PASS rows, and FX_C_PLUGIN defining the plugin info and
 * its entry point from a kPasses array. */
#ifndef TESTS_PLUGIN_API_PLUGINS_C_PASS_TABLE_H_
#define TESTS_PLUGIN_API_PLUGINS_C_PASS_TABLE_H_

#include <stddef.h>

#include "fx/plugin_api.h"

#define UNUSED_PASS_ARGS \
  (void)api, (void)graph, (void)options, (void)user_data, (void)changed

#define NO_NAMES \
  { NULL, 0 }
#define PASS(name, description, run)                                    \
  {                                                                     \
    name, description, NULL, 0, NO_NAMES, NO_NAMES, NO_NAMES, NO_NAMES, \
        NO_NAMES, run, NULL, {0, 0}, 0                                  \
  }

#define FX_C_PLUGIN(plugin_name)                                           \
  static const FxPluginInfo kPlugin = {plugin_name,                        \
                                       "1.0",                              \
                                       FX_API_VERSION,                     \
                                       FX_API_VERSION,                     \
                                       kPasses,                            \
                                       sizeof kPasses / sizeof kPasses[0], \
                                       NULL,                               \
                                       sizeof(FxPluginInfo),               \
                                       sizeof(FxPassInfo)};                \
  FX_PLUGIN_EXPORT const FxPluginInfo* fx_plugin_get_info(void) {          \
    return &kPlugin;                                                       \
  }

#endif /* TESTS_PLUGIN_API_PLUGINS_C_PASS_TABLE_H_ */
