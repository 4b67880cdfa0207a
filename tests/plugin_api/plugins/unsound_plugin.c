/* A plugin whose passes each break one promise fx plugin-check checks,
 * and keep the others: 'nondeterministic' stamps a different meta value
 * on each run, 'changes_numbers' makes the graph return its first input,
 * 'breaks_lint' makes a node use one defined after it, 'hides_change'
 * edits meta but reports changed=0. */
#include <stddef.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "fx/plugin_api.h"

#define UNUSED_PASS_ARGS (void)options, (void)user_data

/* Sets meta[key] of the graph's first node to the string `value`. */
static FxStatus* stamp(const FxApi* api, FxGraph* graph, const char* key,
                       const char* value) {
  FxArg* arg = NULL;
  FxStatus* status = api->CreateString(value, &arg);
  if (status != NULL) return status;
  status = api->NodeSetMeta(api->GraphFirstNode(graph), key, arg);
  api->ReleaseArg(arg);
  return status;
}

static FxStatus* nondeterministic(const FxApi* api, FxGraph* graph,
                                  const FxOptions* options, void* user_data,
                                  int* changed) {
  struct timespec now;
  char text[64];
  UNUSED_PASS_ARGS;
  clock_gettime(CLOCK_MONOTONIC, &now);
  snprintf(text, sizeof text, "%ld.%09ld.%ld", (long)now.tv_sec,
           (long)now.tv_nsec, (long)getpid());
  *changed = 1;
  return stamp(api, graph, "unsound_stamp", text);
}

static FxStatus* hides_change(const FxApi* api, FxGraph* graph,
                              const FxOptions* options, void* user_data,
                              int* changed) {
  UNUSED_PASS_ARGS;
  *changed = 0;
  return stamp(api, graph, "unsound_stamp", "hidden");
}

/* Sets argument `index` of `node` to a reference to `target`. */
static FxStatus* set_arg_to(const FxApi* api, FxNode* node, size_t index,
                            FxNode* target) {
  FxArg* ref = NULL;
  FxStatus* status = api->CreateNodeRef(target, &ref);
  if (status != NULL) return status;
  status = api->NodeSetArg(node, index, ref);
  api->ReleaseArg(ref);
  return status;
}

static FxStatus* changes_numbers(const FxApi* api, FxGraph* graph,
                                 const FxOptions* options, void* user_data,
                                 int* changed) {
  FxNode* first = api->GraphFirstNode(graph);
  UNUSED_PASS_ARGS;
  if (first == NULL || api->NodeOp(first) != FX_OP_PLACEHOLDER) {
    return NULL;
  }
  *changed = 1;
  return set_arg_to(api, api->GraphOutputNode(graph), 0, first);
}

/* The first node with a node argument now uses the last node before the
 * output, which comes after it. */
static FxStatus* breaks_lint(const FxApi* api, FxGraph* graph,
                             const FxOptions* options, void* user_data,
                             int* changed) {
  FxNode* last = api->NodePrev(api->GraphOutputNode(graph));
  FxNode* node;
  UNUSED_PASS_ARGS;
  for (node = api->GraphFirstNode(graph); node != NULL && node != last;
       node = api->NodeNext(node)) {
    if (api->NodeOp(node) == FX_OP_PLACEHOLDER || api->NodeNumArgs(node) == 0)
      continue;
    *changed = 1;
    return set_arg_to(api, node, 0, last);
  }
  return NULL;
}

#define NO_NAMES \
  { NULL, 0 }
#define PASS(name, description, run)                                    \
  {                                                                     \
    name, description, NULL, 0, NO_NAMES, NO_NAMES, NO_NAMES, NO_NAMES, \
        NO_NAMES, run, NULL, {0, 0}, 0                                  \
  }

static const FxPassInfo kPasses[] = {
    PASS("nondeterministic", "stamps the time into meta", nondeterministic),
    PASS("changes_numbers", "returns the first input instead", changes_numbers),
    PASS("breaks_lint", "makes a node use a later one", breaks_lint),
    PASS("hides_change", "edits meta, reports changed=0", hides_change)};

static const FxPluginInfo kPlugin = {"unsound",
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
