/* The C twin of test_passes' second_output and retarget_placeholder (issue
 * 39): passes that leave a graph torch.fx's lint accepts but no program is.
 * 'second_output' adds an output node just after the first node;
 * 'retarget_placeholder' makes the first placeholder's target torch.relu
 * (its op stays). Both succeed and say they changed the graph. */
#include <stddef.h>

#include "c_pass_table.h"
#include "fx/plugin_api.h"

static FxStatus* second_output(const FxApi* api, FxGraph* graph,
                               const FxOptions* options, void* user_data,
                               int* changed) {
  FxNode* first = api->GraphFirstNode(graph);
  FxArg* value = NULL;
  FxNode* output = NULL;
  FxStatus* s;
  UNUSED_PASS_ARGS;
  s = api->CreateNodeRef(first, &value);
  if (s != NULL) return s;
  s = api->GraphSetInsertPoint(graph, first, 1);
  if (s == NULL) {
    const FxArg* args[1];
    args[0] = value;
    s = api->GraphCreateNode(graph, FX_OP_OUTPUT, "output", args, 1, NULL, NULL,
                             0, NULL, NULL, &output);
  }
  api->ReleaseArg(value);
  if (s == NULL) *changed = 1;
  return s;
}

static FxStatus* retarget_placeholder(const FxApi* api, FxGraph* graph,
                                      const FxOptions* options, void* user_data,
                                      int* changed) {
  FxStatus* s;
  UNUSED_PASS_ARGS;
  s = api->NodeSetTarget(api->GraphFirstNode(graph), "torch.relu");
  if (s == NULL) *changed = 1;
  return s;
}

static const FxPassInfo kPasses[] = {
    PASS("second_output", "adds a second output node in mid-graph",
         second_output),
    PASS("retarget_placeholder", "renames the first placeholder's target",
         retarget_placeholder)};

FX_C_PLUGIN("broken_graph")
