/* A plugin that needs a newer host than this one: the loader must refuse it
 * with the versions and the fix in the message, before any of its passes or
 * registrations run (each would leave a trace in the environment). */
#include <stddef.h>
#include <stdlib.h>

#include "fx/plugin_api.h"

static FxStatus* must_not_run(const FxApi* api, FxGraph* graph,
                              const FxOptions* options, void* user_data,
                              int* changed) {
  (void)api, (void)graph, (void)options, (void)user_data, (void)changed;
  setenv("FX_FUTURE_PLUGIN_RAN", "pass", 1);
  return NULL;
}

static FxStatus* must_not_register(const FxApi* api, FxRegistrar* registrar) {
  (void)api, (void)registrar;
  setenv("FX_FUTURE_PLUGIN_RAN", "register_extensions", 1);
  return NULL;
}

static const FxPassInfo kPasses[] = {{"future_pass",
                                      "must never run on this host",
                                      NULL,
                                      0,
                                      {NULL, 0},
                                      {NULL, 0},
                                      {NULL, 0},
                                      {NULL, 0},
                                      {NULL, 0},
                                      must_not_run,
                                      NULL,
                                      {0, 0},
                                      0}};

static const FxPluginInfo kPlugin = {
    "future_plugin",   "9.0", FX_API_VERSION + 1, FX_API_VERSION + 1,
    kPasses,           1,     must_not_register,  sizeof(FxPluginInfo),
    sizeof(FxPassInfo)};

FX_PLUGIN_EXPORT const FxPluginInfo* fx_plugin_get_info(void) {
  return &kPlugin;
}
