/* A deliberately wrong "backend lowering", in C99, for the minimizer's tests:
 * the pass planted_fault rewrites each node its option `nodes` names into a
 * call of torch.sigmoid on the node's first argument (a relu that became a
 * sigmoid), and the pass planted_failure fails on a graph holding one of
 * those nodes (a backend that refuses them). Nodes not named are left
 * alone, so only the planted ones compute wrong numbers. */
#include <stddef.h>
#include <string.h>

#include "fx/plugin_api.h"

/* Whether the option `nodes` names `node`, a compute node (a subgraph's
 * placeholder is named after the node whose value it receives: it is not
 * that node). */
static int named(const FxApi* api, const FxOptions* options, const FxNode* node,
                 FxStatus** status) {
  size_t count = 0, i;
  const char* name = api->NodeName(node);
  FxOpcode op = api->NodeOp(node);
  *status = NULL;
  if (op != FX_OP_CALL_FUNCTION && op != FX_OP_CALL_METHOD &&
      op != FX_OP_CALL_MODULE) {
    return 0;
  }
  *status = api->OptionsGetListSize(options, "nodes", &count);
  for (i = 0; *status == NULL && i < count; ++i) {
    const char* item = NULL;
    *status = api->OptionsGetListItem(options, "nodes", i, &item);
    if (*status == NULL && strcmp(item, name) == 0) return 1;
  }
  return 0;
}

/* torch.sigmoid(first argument of `node`) in place of `node`. */
static FxStatus* to_sigmoid(const FxApi* api, FxGraph* graph, FxNode* node) {
  FxNode* sigmoid = NULL;
  const FxArg* args[1];
  FxStatus* status;
  if (api->NodeNumArgs(node) < 1) {
    return api->CreateStatus(FX_INVALID_ARGUMENT,
                             "planted_fault: the node has no argument");
  }
  args[0] = api->NodeArg(node, 0);
  status = api->GraphSetInsertPoint(graph, node, 0);
  if (status == NULL) {
    status = api->GraphCreateNode(graph, FX_OP_CALL_FUNCTION, "torch.sigmoid",
                                  args, 1, NULL, NULL, 0, NULL, NULL, &sigmoid);
  }
  if (status == NULL) status = api->NodeReplaceAllUsesWith(node, sigmoid, NULL);
  if (status == NULL) status = api->GraphEraseNode(graph, node);
  return status;
}

static FxStatus* planted_fault(const FxApi* api, FxGraph* graph,
                               const FxOptions* options, void* user_data,
                               int* changed) {
  FxNode* node = api->GraphFirstNode(graph);
  FxStatus* status = NULL;
  (void)user_data;
  while (node != NULL && status == NULL) {
    FxNode* next = api->NodeNext(node);
    if (named(api, options, node, &status) && status == NULL) {
      status = to_sigmoid(api, graph, node);
      *changed = 1;
    }
    node = next;
  }
  return status;
}

static FxStatus* planted_failure(const FxApi* api, FxGraph* graph,
                                 const FxOptions* options, void* user_data,
                                 int* changed) {
  FxNode* node = api->GraphFirstNode(graph);
  FxStatus* status = NULL;
  (void)user_data;
  *changed = 0;
  for (; node != NULL && status == NULL; node = api->NodeNext(node)) {
    if (named(api, options, node, &status) && status == NULL) {
      return api->CreateStatus(
          FX_FAILED_PRECONDITION,
          "planted_failure: this backend refuses the node");
    }
  }
  return status;
}

static const FxOptionSpec kOptions[] = {
    {"nodes", FX_OPTION_STRING_LIST, "", "the nodes to get wrong, by name"}};

static const FxPassInfo kPasses[] = {
    {"planted_fault",
     "the named nodes become torch.sigmoid of their first argument",
     kOptions,
     1,
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     planted_fault,
     NULL,
     {0, 0},
     0},
    {"planted_failure",
     "fails on a graph holding one of the named nodes",
     kOptions,
     1,
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     planted_failure,
     NULL,
     {0, 0},
     0}};

static const FxPluginInfo kPlugin = {"planted_fault_plugin",
                                     "1.0",
                                     FX_API_VERSION,
                                     FX_API_VERSION,
                                     kPasses,
                                     2,
                                     NULL,
                                     sizeof(FxPluginInfo),
                                     sizeof(FxPassInfo)};

FX_PLUGIN_EXPORT const FxPluginInfo* fx_plugin_get_info(void) {
  return &kPlugin;
}
