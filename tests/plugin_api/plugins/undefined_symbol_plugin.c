/* A plugin that calls a function no library defines: dlopen (RTLD_NOW)
 * refuses it, and the host must say why ("undefined symbol:
 * fx_test_defined_nowhere"), not Boost.DLL's "Bad file descriptor". */
#include "fx/plugin_api.h"

void fx_test_defined_nowhere(void);

static const FxPluginInfo kInfo = {"undefined_symbol",
                                   "1.0",
                                   FX_API_VERSION,
                                   FX_API_VERSION,
                                   NULL,
                                   0,
                                   NULL,
                                   0,
                                   0};

FX_PLUGIN_EXPORT const FxPluginInfo* fx_plugin_get_info(void) {
  fx_test_defined_nowhere();
  return &kInfo;
}
