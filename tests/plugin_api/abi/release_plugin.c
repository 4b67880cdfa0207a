/* A plugin as a pass author would have built it against one released header
 * (BUILD.bazel compiles it once per release from v2 on, against the frozen
 * copy alone; the two releases of version 1 have plugins of their own). It
 * declares two passes, so the host must step through its FxPassInfo array
 * at that release's size:
 *  - release_first renames torch.relu to torch.sigmoid and records the
 *    release's FX_API_VERSION in the output node's meta "release_version";
 *  - release_second checks that every entry of its table (ENTRIES_INC, the
 *    names entries_of.py read from the same header) is filled in and that
 *    the table says its version. */
#include <string.h>

#include "fx/plugin_api.h"

#define STR2(x) #x
#define STR(x) STR2(x)

static FxStatus* first(const FxApi* api, FxGraph* graph,
                       const FxOptions* options, void* user_data,
                       int* changed) {
  FxNode* n;
  FxArg* version = NULL;
  FxStatus* s = NULL;
  (void)options;
  (void)user_data;
  for (n = api->GraphFirstNode(graph); n != NULL && s == NULL;
       n = api->NodeNext(n)) {
    if (api->NodeOp(n) == FX_OP_CALL_FUNCTION &&
        strcmp(api->NodeTarget(n), "torch.relu") == 0) {
      s = api->NodeSetTarget(n, "torch.sigmoid");
    }
  }
  if (s == NULL) s = api->CreateInt(FX_API_VERSION, &version);
  if (s == NULL) {
    s = api->NodeSetMeta(api->GraphOutputNode(graph), "release_version",
                         version);
  }
  api->ReleaseArg(version);
  *changed = 1;
  return s;
}

static FxStatus* second(const FxApi* api, FxGraph* graph,
                        const FxOptions* options, void* user_data,
                        int* changed) {
  (void)graph;
  (void)options;
  (void)user_data;
  *changed = 0;
  if (api->version != FX_API_VERSION) {
    return api->CreateStatus(FX_FAILED_PRECONDITION,
                             "handed a table of another version");
  }
#define X(name)                                                       \
  if (api->name == NULL) {                                            \
    return api->CreateStatus(FX_INTERNAL, "entry " #name " is NULL"); \
  }
#include ENTRIES_INC
#undef X
  return NULL;
}

static const FxPassInfo kPasses[] = {
    {.name = "release_first", .description = "relu to sigmoid", .run = first},
    {.name = "release_second", .description = "every entry", .run = second}};

static const FxPluginInfo kPlugin = {
    .name = "release_plugin_v" STR(FX_API_VERSION),
    .version = "1.0",
    .api_version = FX_API_VERSION,
    .min_api_version = FX_API_VERSION,
    .passes = kPasses,
    .num_passes = 2,
#if FX_API_VERSION >= 2
    .struct_size = sizeof(FxPluginInfo),
    .pass_info_size = sizeof(FxPassInfo),
#endif
};

FX_PLUGIN_EXPORT const FxPluginInfo* fx_plugin_get_info(void) {
  return &kPlugin;
}
