/* A plugin whose pass 'refuse_target' fails (FX_INTERNAL) when a node's
 * target is its option `target` (default "torch.relu"): what fx reduce
 * shrinks a graph around. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "fx/plugin_api.h"

static FxStatus* refuse_target(const FxApi* api, FxGraph* graph,
                               const FxOptions* options, void* user_data,
                               int* changed) {
  const char* target = NULL;
  FxNode* node;
  char message[256];
  FxStatus* status = api->OptionsGetString(options, "target", &target);
  (void)user_data;
  *changed = 0;
  if (status != NULL) return status;
  for (node = api->GraphFirstNode(graph); node != NULL;
       node = api->NodeNext(node)) {
    const char* t = api->NodeTarget(node);
    if (t != NULL && strcmp(t, target) == 0) {
      snprintf(message, sizeof message, "refusing %s at node '%s'", target,
               api->NodeName(node));
      return api->CreateStatus(FX_INTERNAL, message);
    }
  }
  return NULL;
}

static const FxOptionSpec kOptions[] = {
    {"target", FX_OPTION_STRING, "torch.relu", "the target refused"}};

static const FxPassInfo kPasses[] = {{"refuse_target",
                                      "fails when a node has the target",
                                      kOptions,
                                      1,
                                      {NULL, 0},
                                      {NULL, 0},
                                      {NULL, 0},
                                      {NULL, 0},
                                      {NULL, 0},
                                      refuse_target,
                                      NULL,
                                      {0, 0},
                                      0}};

static const FxPluginInfo kPlugin = {"picky",
                                     "1.0",
                                     FX_API_VERSION,
                                     FX_API_VERSION,
                                     kPasses,
                                     sizeof kPasses / sizeof kPasses[0],
                                     NULL,
                                     sizeof(FxPluginInfo),
                                     sizeof(FxPassInfo)};

FX_PLUGIN_EXPORT const FxPluginInfo* fx_plugin_get_info(void) {
  return &kPlugin;
}
