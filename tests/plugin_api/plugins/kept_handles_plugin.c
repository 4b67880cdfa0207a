/* A C99 plugin that keeps what it was only lent, across passes (issue 39):
 *  - 'keep_then_fail' keeps the graph's handle, its first node's, the
 *    output node's args[0] (a borrowed argument) and a view of the parameter
 *    "weight" (never released) in statics, edits the node and fails, so the
 *    graph it kept is rolled back;
 *  - 'use_kept_handles' asks the kept node's name, edits it, reads the kept
 *    argument and an argument it released itself, and records what it saw
 *    in the output node's meta['seen']: "name=NULL
 *    status=FAILED_PRECONDITION arg=FAILED_PRECONDITION
 *    released=FAILED_PRECONDITION" when the host refused the stale handles,
 *    "nothing kept released=..." when no earlier pass of this process kept
 *    any (an isolated pass keeps them in its worker only); it succeeds;
 *  - 'write_kept_view_then_fail' writes 7 into the kept view, then fails. */
#include <stdint.h>
#include <stdio.h>

#include "c_pass_table.h"
#include "fx/plugin_api.h"

static FxGraph* kept_graph = NULL;
static FxNode* kept_node = NULL;
static const FxArg* kept_arg = NULL;
static DLManagedTensor* kept_view = NULL;

static FxStatus* keep_then_fail(const FxApi* api, FxGraph* graph,
                                const FxOptions* options, void* user_data,
                                int* changed) {
  UNUSED_PASS_ARGS;
  kept_graph = graph;
  kept_node = api->GraphFirstNode(graph);
  kept_arg = api->NodeArg(api->GraphOutputNode(graph), 0);
  if (kept_view != NULL && kept_view->deleter) kept_view->deleter(kept_view);
  kept_view = NULL;
  FxStatus* s = api->GraphGetAttr(graph, "weight", &kept_view);
  if (s != NULL) return s;
  s = api->NodeSetType(kept_node, "torch.Tensor");
  if (s != NULL) return s;
  *changed = 1;
  return api->CreateStatus(FX_INTERNAL, "keep_then_fail gives up");
}

/* "OK", "FAILED_PRECONDITION" or "another error"; releases `s`. */
static const char* code_of(const FxApi* api, FxStatus* s) {
  const char* code = s == NULL ? "OK"
                     : api->GetStatusCode(s) == FX_FAILED_PRECONDITION
                         ? "FAILED_PRECONDITION"
                         : "another error";
  if (s != NULL) api->ReleaseStatus(s);
  return code;
}

/* Reads an argument after releasing it. */
static const char* use_released_arg(const FxApi* api) {
  FxArg* arg = NULL;
  FxStatus* s = api->CreateInt(1, &arg);
  if (s != NULL) return code_of(api, s);
  api->ReleaseArg(arg);
  int64_t value = 0;
  return code_of(api, api->ArgGetInt(arg, &value));
}

static FxStatus* use_kept_handles(const FxApi* api, FxGraph* graph,
                                  const FxOptions* options, void* user_data,
                                  int* changed) {
  UNUSED_PASS_ARGS;
  char seen[160];
  const char* released = use_released_arg(api);
  snprintf(seen, sizeof seen, "nothing kept released=%s", released);
  if (kept_graph != NULL) {
    const char* name = api->NodeName(kept_node);
    const char* status =
        code_of(api, api->NodeSetType(kept_node, "torch.Tensor"));
    FxNode* input = NULL;
    const char* arg = code_of(api, api->ArgGetNode(kept_arg, &input));
    snprintf(seen, sizeof seen, "name=%s status=%s arg=%s released=%s",
             name ? name : "NULL", status, arg, released);
  }
  FxArg* value = NULL;
  FxStatus* s = api->CreateString(seen, &value);
  if (s != NULL) return s;
  s = api->NodeSetMeta(api->GraphOutputNode(graph), "seen", value);
  api->ReleaseArg(value);
  *changed = 1;
  return s;
}

static FxStatus* write_kept_view_then_fail(const FxApi* api, FxGraph* graph,
                                           const FxOptions* options,
                                           void* user_data, int* changed) {
  UNUSED_PASS_ARGS;
  if (kept_view != NULL) {
    DLTensor* d = &kept_view->dl_tensor;
    float* data = (float*)((char*)d->data + d->byte_offset);
    int64_t count = 1;
    for (int i = 0; i < d->ndim; ++i) count *= d->shape[i];
    for (int64_t i = 0; i < count; ++i) data[i] = 7;
  }
  return api->CreateStatus(FX_INTERNAL, "write_kept_view_then_fail gives up");
}

static const FxPassInfo kPasses[] = {
    PASS("keep_then_fail", "keeps handles and a view, edits, then fails",
         keep_then_fail),
    PASS("use_kept_handles", "uses the kept handles, records what it saw",
         use_kept_handles),
    PASS("write_kept_view_then_fail", "writes through the kept view, fails",
         write_kept_view_then_fail)};

FX_C_PLUGIN("kept_handles")
