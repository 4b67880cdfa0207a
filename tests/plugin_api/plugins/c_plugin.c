/* A pass plugin in plain C99, compiled by the C compiler: proof that the
 * plugin ABI is C. Its pass turns every operator.add into operator.mul and,
 * with the option tag set, names the pass in the output node's meta. */
#include <stddef.h>
#include <stdlib.h>

#include "fx/plugin_api.h"

static FxStatus* add_to_mul(const FxApi* api, FxGraph* graph,
                            const FxOptions* options, void* user_data,
                            int* changed) {
  size_t count = 0, i;
  FxNode** nodes;
  FxStatus* status;
  const char* tag = NULL;
  (void)user_data;
  status = api->GraphFindNodes(graph, FX_OP_CALL_FUNCTION, "operator.add", NULL,
                               0, &count);
  if (status != NULL) return status;
  nodes = (FxNode**)malloc((count ? count : 1) * sizeof(FxNode*));
  if (nodes == NULL) return api->CreateStatus(FX_INTERNAL, "out of memory");
  status = api->GraphFindNodes(graph, FX_OP_CALL_FUNCTION, "operator.add",
                               nodes, count, &count);
  for (i = 0; status == NULL && i < count; ++i) {
    status = api->NodeSetTarget(nodes[i], "operator.mul");
  }
  free(nodes);
  if (status != NULL) return status;
  status = api->OptionsGetString(options, "tag", &tag);
  if (status != NULL) return status;
  if (tag[0] != '\0') {
    FxArg* value = NULL;
    status = api->CreateString(tag, &value);
    if (status != NULL) return status;
    status = api->NodeSetMeta(api->GraphOutputNode(graph), "tag", value);
    api->ReleaseArg(value);
    if (status != NULL) return status;
  }
  *changed = count > 0;
  return NULL;
}

static const FxOptionSpec kOptions[] = {
    {"tag", FX_OPTION_STRING, "", "written to meta['tag'] of the output"}};

static const FxPassInfo kPasses[] = {
    {"c_add_to_mul",
     "operator.add -> operator.mul, written in C",
     kOptions,
     1,
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     add_to_mul,
     NULL,
     {0, 0},
     0}};

static const FxPluginInfo kPlugin = {
    "c_plugin", "1.0", FX_API_VERSION,       FX_API_VERSION,    kPasses,
    1,          NULL,  sizeof(FxPluginInfo), sizeof(FxPassInfo)};

FX_PLUGIN_EXPORT const FxPluginInfo* fx_plugin_get_info(void) {
  return &kPlugin;
}
