/* A plugin whose passes end the process, each its own way: 'segfault'
 * writes through NULL, 'abort' calls abort(), 'edit_then_segfault' changes
 * the graph first, 'hang' never returns, 'hog' allocates and touches memory
 * until an allocation fails (then aborts), 'exit' calls exit(3). In-process
 * the host must name the pass before it dies; isolated (fx run --isolate)
 * it must survive with the graph as it was before the pass. */
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

static const FxPassInfo kPasses[] = {
    PASS("segfault", "writes through a NULL pointer", segfault),
    PASS("abort", "calls abort()", do_abort),
    PASS("edit_then_segfault", "edits every node, then writes through NULL",
         edit_then_segfault),
    PASS("hang", "never returns", hang),
    PASS("hog", "allocates memory until malloc fails, then aborts", hog),
    PASS("exit", "calls exit(3)", do_exit)};

FX_C_PLUGIN("crash")
