/* A plugin whose passes end the process, each its own way: 'segfault'
 * writes through NULL, 'abort' calls abort(), 'edit_then_segfault' changes
 * the graph first, 'hang' never returns, 'hog' allocates and touches memory
 * until an allocation fails (then aborts), 'exit' calls exit(3). In-process
 * the host must name the pass before it dies; isolated (fx run --isolate)
 * it must survive with the graph as it was before the pass.
 *
 * Two crash only sometimes, so a host that runs them once in a worker and
 * again in process dies: 'second_run_segfault' succeeds (changing nothing)
 * the first time it runs in a process and segfaults every time after;
 * 'segfault_on_own_mark' marks the first node's meta and segfaults on a
 * graph that carries its mark (its own output), and declares itself
 * idempotent so fx plugin-check runs it on its own output. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "c_pass_table.h"
#include "fx/plugin_api.h"

static FxStatus* segfault(const FxApi* api, FxGraph* graph,
                          const FxOptions* options, void* user_data,
                          int* changed) {
  volatile int* nowhere = NULL;
  UNUSED_PASS_ARGS;
  *nowhere = 1;
  return NULL;
}

static FxStatus* do_abort(const FxApi* api, FxGraph* graph,
                          const FxOptions* options, void* user_data,
                          int* changed) {
  UNUSED_PASS_ARGS;
  abort();
}

/* Every node's type annotation changed, then a crash. */
static FxStatus* edit_then_segfault(const FxApi* api, FxGraph* graph,
                                    const FxOptions* options, void* user_data,
                                    int* changed) {
  FxNode* node;
  UNUSED_PASS_ARGS;
  for (node = api->GraphFirstNode(graph); node != NULL;
       node = api->NodeNext(node)) {
    FxStatus* status = api->NodeSetType(node, "edited.Type");
    if (status != NULL) return status;
  }
  *changed = 1;
  return segfault(api, graph, options, user_data, changed);
}

static FxStatus* hang(const FxApi* api, FxGraph* graph,
                      const FxOptions* options, void* user_data, int* changed) {
  volatile unsigned long spins = 0;
  UNUSED_PASS_ARGS;
  for (;;) ++spins;
  return NULL; /* not reached */
}

static FxStatus* hog(const FxApi* api, FxGraph* graph, const FxOptions* options,
                     void* user_data, int* changed) {
  const size_t chunk = (size_t)16 << 20;
  UNUSED_PASS_ARGS;
  for (;;) {
    char* block = malloc(chunk);
    if (block == NULL) abort();
    memset(block, 1, chunk);
  }
}

static FxStatus* do_exit(const FxApi* api, FxGraph* graph,
                         const FxOptions* options, void* user_data,
                         int* changed) {
  UNUSED_PASS_ARGS;
  exit(3);
}

/* Counts the runs in this process (a static, as a plugin's caches are). */
static FxStatus* second_run_segfault(const FxApi* api, FxGraph* graph,
                                     const FxOptions* options, void* user_data,
                                     int* changed) {
  static int runs = 0;
  UNUSED_PASS_ARGS;
  if (++runs < 2) return NULL;
  return segfault(api, graph, options, user_data, changed);
}

static FxStatus* segfault_on_own_mark(const FxApi* api, FxGraph* graph,
                                      const FxOptions* options, void* user_data,
                                      int* changed) {
  static const char kMark[] = "crash_plugin_mark";
  FxNode* first = api->GraphFirstNode(graph);
  FxArg* mark = NULL;
  FxStatus* status;
  UNUSED_PASS_ARGS;
  if (first == NULL) return NULL;
  if (api->NodeGetMeta(first, kMark) != NULL) {
    return segfault(api, graph, options, user_data, changed);
  }
  status = api->CreateString("marked", &mark);
  if (status != NULL) return status;
  status = api->NodeSetMeta(first, kMark, mark);
  api->ReleaseArg(mark);
  *changed = 1;
  return status;
}

static const FxPassInfo kPasses[] = {
    PASS("segfault", "writes through a NULL pointer", segfault),
    PASS("abort", "calls abort()", do_abort),
    PASS("edit_then_segfault", "edits every node, then writes through NULL",
         edit_then_segfault),
    PASS("hang", "never returns", hang),
    PASS("hog", "allocates memory until malloc fails, then aborts", hog),
    PASS("exit", "calls exit(3)", do_exit),
    PASS("second_run_segfault",
         "segfaults when it runs a second time in a process",
         second_run_segfault),
    /* PASS, declared idempotent (FxPassInfo.idempotent, API version 6). */
    {"segfault_on_own_mark",
     "marks the first node's meta; segfaults on a graph with the mark",
     NULL,
     0,
     NO_NAMES,
     NO_NAMES,
     NO_NAMES,
     NO_NAMES,
     NO_NAMES,
     segfault_on_own_mark,
     NULL,
     {0, 0},
     1}};

FX_C_PLUGIN("crash")
