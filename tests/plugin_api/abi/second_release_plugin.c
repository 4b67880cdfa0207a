/* A plugin as it was written and built against the second release of
 * version 1 (released/v1_123/fx/plugin_api.h, 123 entries, frozen; BUILD.bazel
 * compiles this file against it alone): its binary must keep loading and
 * running on every later host.
 *
 * It uses entries from the start, the middle and the very end of its table,
 * so an entry that moved would make it call the wrong function, and every
 * entry at slots 99..105, where the first release of version 1 had its
 * registration and custom-op entries (released/README.md): the host
 * forwards those slots by their first argument, so they are called here
 * from every context, with a registrar or a custom-op call live too:
 *  - register_extensions creates and releases a graph (CreateGraph,
 *    ReleaseGraph) while its registrar is live, then registers the custom op
 *    `v1_plugin.identity` (RegisterCustomOp; its kernel uses CallTensorArg
 *    and creates and releases a graph while its call is live, its shape
 *    function uses CallTensorMeta);
 *  - pass `v1_mark` renames every torch.relu to torch.sigmoid
 *    (NodeSetTarget) and records on each node the number of users NodeUsers
 *    reports (meta "v1_users"), and on the output node the number of example
 *    inputs (meta "v1_example_inputs", GraphNumExampleInputs);
 *  - pass `v1_rewrite` replaces torch.neg(x) with torch.mul(x, -1)
 *    (GraphMatchPattern, GraphReplacePattern on graphs from CreateGraph),
 *    copies and erases the new node (GraphNodeCopy) and records the first
 *    example input's rank (GraphExampleInput) as meta "v1_input_rank";
 *  - all fail unless the table they are handed says version 1 (the host
 *    hands a plugin no table newer than it was built for). */
#include <stddef.h>
#include <string.h>

#include "fx/plugin_api.h"

#if FX_API_VERSION != 1
#error "second_release_plugin.c must be compiled against version 1"
#endif

static FxStatus* expect_version_1(const FxApi* api) {
  if (api->version == 1) return NULL;
  return api->CreateStatus(FX_FAILED_PRECONDITION,
                           "v1_plugin was handed a table that is not "
                           "version 1");
}

static FxStatus* set_int_meta(const FxApi* api, FxNode* node, const char* key,
                              int64_t value) {
  FxArg* arg = NULL;
  FxStatus* s = api->CreateInt(value, &arg);
  if (s == NULL) s = api->NodeSetMeta(node, key, arg);
  api->ReleaseArg(arg);
  return s;
}

static FxStatus* mark(const FxApi* api, FxGraph* graph,
                      const FxOptions* options, void* user_data, int* changed) {
  FxNode* users[16];
  FxNode* n;
  FxStatus* s = expect_version_1(api);
  (void)options;
  (void)user_data;
  if (s != NULL) return s;
  for (n = api->GraphFirstNode(graph); n != NULL; n = api->NodeNext(n)) {
    size_t count = api->NodeUsers(n, users, 16);
    if (count > 0 && users[0] != api->NodeUser(n, 0)) {
      return api->CreateStatus(FX_INTERNAL, "NodeUsers disagrees");
    }
    s = set_int_meta(api, n, "v1_users", (int64_t)count);
    if (s == NULL && api->NodeOp(n) == FX_OP_CALL_FUNCTION) {
      if (strcmp(api->NodeTarget(n), "torch.relu") == 0) {
        s = api->NodeSetTarget(n, "torch.sigmoid");
      }
    }
    if (s != NULL) return s;
  }
  s = set_int_meta(api, api->GraphOutputNode(graph), "v1_example_inputs",
                   (int64_t)api->GraphNumExampleInputs(graph));
  *changed = 1;
  return s;
}

/* A graph created and released at once (slots 102 and 103). */
static FxStatus* create_and_release_graph(const FxApi* api) {
  FxGraph* g = NULL;
  FxStatus* s = api->CreateGraph(&g);
  if (s != NULL) return s;
  if (g == NULL) return api->CreateStatus(FX_INTERNAL, "CreateGraph: NULL");
  api->ReleaseGraph(g);
  return NULL;
}

/* A graph x -> TARGET(x, *extra) -> output, from CreateGraph. */
static FxStatus* one_op_graph(const FxApi* api, const char* target,
                              const FxArg* extra, FxGraph** out) {
  FxNode *x = NULL, *op = NULL, *result = NULL;
  FxArg *x_ref = NULL, *op_ref = NULL;
  const FxArg* args[2];
  FxStatus* s = api->CreateGraph(out);
  if (s == NULL) {
    s = api->GraphCreateNode(*out, FX_OP_PLACEHOLDER, "x", NULL, 0, NULL, NULL,
                             0, NULL, NULL, &x);
  }
  if (s == NULL) s = api->CreateNodeRef(x, &x_ref);
  args[0] = x_ref;
  args[1] = extra;
  if (s == NULL) {
    s = api->GraphCreateNode(*out, FX_OP_CALL_FUNCTION, target, args,
                             extra ? 2 : 1, NULL, NULL, 0, NULL, NULL, &op);
  }
  if (s == NULL) s = api->CreateNodeRef(op, &op_ref);
  args[0] = op_ref;
  if (s == NULL) {
    s = api->GraphCreateNode(*out, FX_OP_OUTPUT, "output", args, 1, NULL, NULL,
                             0, NULL, NULL, &result);
  }
  api->ReleaseArg(x_ref);
  api->ReleaseArg(op_ref);
  return s;
}

static FxStatus* count_match(const FxMatch* match, void* user_data) {
  (void)match;
  ++*(int64_t*)user_data;
  return NULL;
}

static FxStatus* rewrite(const FxApi* api, FxGraph* graph,
                         const FxOptions* options, void* user_data,
                         int* changed) {
  FxGraph *pattern = NULL, *replacement = NULL;
  FxArg* minus_one = NULL;
  FxNode *mul = NULL, *copy = NULL;
  DLManagedTensor* input = NULL;
  int64_t matches = 0, rank = -1;
  size_t replaced = 0, found = 0;
  FxStatus* s = expect_version_1(api);
  (void)options;
  (void)user_data;
  if (s == NULL) s = one_op_graph(api, "torch.neg", NULL, &pattern);
  if (s == NULL) s = api->CreateFloat(-1.0, &minus_one);
  if (s == NULL) s = one_op_graph(api, "torch.mul", minus_one, &replacement);
  if (s == NULL) {
    s = api->GraphMatchPattern(graph, pattern, 0, count_match, &matches);
  }
  if (s == NULL) {
    s = api->GraphReplacePattern(graph, pattern, replacement, 0, NULL, NULL,
                                 NULL, NULL, &replaced);
  }
  if (s == NULL && (int64_t)replaced != matches) {
    s = api->CreateStatus(FX_INTERNAL, "matches and replacements differ");
  }
  if (s == NULL) {
    s = api->GraphFindNodes(graph, FX_OP_CALL_FUNCTION, "torch.mul", &mul, 1,
                            &found);
  }
  if (s == NULL && found > 0) {
    s = api->GraphSetInsertPoint(graph, mul, 1);
    if (s == NULL) s = api->GraphNodeCopy(graph, mul, &copy);
    if (s == NULL && strcmp(api->NodeTarget(copy), "torch.mul") != 0) {
      s = api->CreateStatus(FX_INTERNAL, "GraphNodeCopy copied another node");
    }
    if (s == NULL) s = api->GraphEraseNode(graph, copy);
  }
  if (s == NULL && api->GraphNumExampleInputs(graph) > 0) {
    s = api->GraphExampleInput(graph, 0, &input);
    if (s == NULL) {
      rank = input->dl_tensor.ndim;
      input->deleter(input);
    }
  }
  if (s == NULL) {
    s = set_int_meta(api, api->GraphOutputNode(graph), "v1_matches", matches);
  }
  if (s == NULL) {
    s = set_int_meta(api, api->GraphOutputNode(graph), "v1_input_rank", rank);
  }
  api->ReleaseArg(minus_one);
  if (pattern != NULL) api->ReleaseGraph(pattern);
  if (replacement != NULL) api->ReleaseGraph(replacement);
  *changed = replaced > 0;
  return s;
}

/* v1_plugin.identity(input): returns its input. */
static FxStatus* identity_kernel(const FxApi* api, const FxOpCall* call,
                                 void* user_data, DLManagedTensor** out) {
  FxStatus* s = create_and_release_graph(api);
  (void)user_data;
  if (s != NULL) return s;
  return api->CallTensorArg(call, "input", out);
}

static FxStatus* identity_shape(const FxApi* api, const FxOpCall* call,
                                void* user_data, FxTensorSpec* out) {
  FxTensorMeta meta;
  int32_t d;
  FxStatus* s = api->CallTensorMeta(call, "input", &meta);
  (void)user_data;
  if (s != NULL) return s;
  out->ndim = meta.ndim;
  for (d = 0; d < meta.ndim && d < FX_MAX_DIMS; ++d) {
    out->shape[d] = meta.shape[d];
  }
  out->dtype = meta.dtype;
  return NULL;
}

static FxStatus* register_extensions(const FxApi* api, FxRegistrar* registrar) {
  static const FxCustomOp kIdentity = {"v1_plugin.identity", "input",
                                       identity_kernel, identity_shape, NULL};
  FxStatus* s = expect_version_1(api);
  if (s == NULL) s = create_and_release_graph(api);
  if (s != NULL) return s;
  return api->RegisterCustomOp(registrar, &kIdentity);
}

static const FxPassInfo kPasses[] = {
    {"v1_mark",
     "renames relu to sigmoid, records users and example inputs in meta",
     NULL,
     0,
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     mark,
     NULL},
    {"v1_rewrite",
     "neg(x) to mul(x, -1) by pattern, records matches and the input's rank",
     NULL,
     0,
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     rewrite,
     NULL}};

static const FxPluginInfo kPlugin = {
    "v1_plugin", "1.0", 1, 1, kPasses, 2, register_extensions};

FX_PLUGIN_EXPORT const FxPluginInfo* fx_plugin_get_info(void) {
  return &kPlugin;
}
