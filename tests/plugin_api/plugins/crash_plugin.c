/* A plugin whose passes kill the process: 'segfault' writes through NULL,
 * 'abort' calls abort(). The host must name the pass before it dies. */
#include <stddef.h>
#include <stdlib.h>

#include "fx/plugin_api.h"

static FxStatus* segfault(const FxApi* api, FxGraph* graph,
                          const FxOptions* options, void* user_data,
                          int* changed) {
  volatile int* nowhere = NULL;
  (void)api, (void)graph, (void)options, (void)user_data, (void)changed;
  *nowhere = 1;
  return NULL;
}

static FxStatus* do_abort(const FxApi* api, FxGraph* graph,
                          const FxOptions* options, void* user_data,
                          int* changed) {
  (void)api, (void)graph, (void)options, (void)user_data, (void)changed;
  abort();
}

#define NO_NAMES \
  { NULL, 0 }
static const FxPassInfo kPasses[] = {
    {"segfault", "writes through a NULL pointer", NULL, 0, NO_NAMES, NO_NAMES,
     NO_NAMES, NO_NAMES, NO_NAMES, segfault, NULL},
    {"abort", "calls abort()", NULL, 0, NO_NAMES, NO_NAMES, NO_NAMES, NO_NAMES,
     NO_NAMES, do_abort, NULL}};

static const FxPluginInfo kPlugin = {
    "crash", "1.0", FX_API_VERSION,       FX_API_VERSION,    kPasses,
    2,       NULL,  sizeof(FxPluginInfo), sizeof(FxPassInfo)};

FX_PLUGIN_EXPORT const FxPluginInfo* fx_plugin_get_info(void) {
  return &kPlugin;
}
