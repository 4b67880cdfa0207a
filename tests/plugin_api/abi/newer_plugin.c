/* A plugin built against a header newer than this host's (API version
 * FX_API_VERSION + 1) that declares it runs on this host (min_api_version
 * FX_API_VERSION). Its FxPassInfo has grown in that newer header (a field
 * appended, simulated by NewerPassInfo), so the host must walk `passes` at
 * the declared pass_info_size to find its second pass. Each pass fails
 * unless it is handed this host's table (version FX_API_VERSION: no newer
 * than the host has, no older than the plugin asked for). */
#include <stddef.h>

#include "fx/plugin_api.h"

typedef struct NewerPassInfo {
  FxPassInfo current;
  const char* appended_later; /* a field a later version might add */
} NewerPassInfo;

static FxStatus* check_table(const FxApi* api, FxGraph* graph,
                             const FxOptions* options, void* user_data,
                             int* changed) {
  (void)graph;
  (void)options;
  (void)user_data;
  *changed = 0;
  if (api->version == FX_API_VERSION && api->ValueTensorMeta2 != NULL) {
    return NULL;
  }
  return api->CreateStatus(FX_FAILED_PRECONDITION,
                           "newer_plugin expected the host's whole table");
}

#define NEWER_PASS(NAME)                         \
  {                                              \
    {NAME,      "checks the table it is handed", \
     NULL,      0,                               \
     {NULL, 0}, {NULL, 0},                       \
     {NULL, 0}, {NULL, 0},                       \
     {NULL, 0}, check_table,                     \
     NULL,      {0, 0},                          \
     0},                                         \
        "ignored by older hosts"                 \
  }

static const NewerPassInfo kPasses[] = {NEWER_PASS("newer_first"),
                                        NEWER_PASS("newer_second")};

static const FxPluginInfo kPlugin = {"newer_plugin",
                                     "1.0",
                                     FX_API_VERSION + 1,
                                     FX_API_VERSION,
                                     &kPasses[0].current,
                                     2,
                                     NULL,
                                     sizeof(FxPluginInfo),
                                     sizeof(NewerPassInfo)};

FX_PLUGIN_EXPORT const FxPluginInfo* fx_plugin_get_info(void) {
  return &kPlugin;
}
