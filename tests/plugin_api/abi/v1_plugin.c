/* A plugin as it was written and built against the version-1 header (the
 * copy in v1/fx/plugin_api.h, frozen; BUILD.bazel compiles this file against
 * it alone): its binary must keep loading and running on every later host.
 *
 * It uses entries from the start, the middle and the very end of the
 * version-1 table, so an entry that moved would make it call the wrong
 * function:
 *  - register_extensions registers the custom op `v1_plugin.identity`
 *    (RegisterCustomOp; its kernel uses CallTensorArg, its shape function
 *    CallTensorMeta);
 *  - pass `v1_mark` renames every torch.relu to torch.sigmoid
 *    (NodeSetTarget) and records on each node the number of users NodeUsers
 *    reports (meta "v1_users"), and on the output node the number of example
 *    inputs (meta "v1_example_inputs", GraphNumExampleInputs);
 *  - both fail unless the table they are handed says version 1 (the host
 *    hands a plugin no table newer than it was built for). */
#include <stddef.h>
#include <string.h>

#include "fx/plugin_api.h"

#if FX_API_VERSION != 1
#error "v1_plugin.c must be compiled against the version-1 header"
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

/* v1_plugin.identity(input): returns its input. */
static FxStatus* identity_kernel(const FxApi* api, const FxOpCall* call,
                                 void* user_data, DLManagedTensor** out) {
  (void)user_data;
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
     NULL}};

static const FxPluginInfo kPlugin = {
    "v1_plugin", "1.0", 1, 1, kPasses, 1, register_extensions};

FX_PLUGIN_EXPORT const FxPluginInfo* fx_plugin_get_info(void) {
  return &kPlugin;
}
