/* A plugin as it was built against the first release of the plugin API
 * (released/v1_106/fx/plugin_api.h: version 1, 106 table entries), its only
 * fx header. Its registration and custom-op entries sit at slots 99..105,
 * where later releases put other functions; this binary must still reach
 * the ones it was compiled for (released/README.md, "Version 1, twice").
 *
 * It calls all seven of those entries and entries from the start and the
 * middle of its table:
 *  - register_extensions registers the custom op
 *    `first_release.affine(input, scale, shift=None)` (RegisterCustomOp) and
 *    a leaf-module rule making `first_release.Block` a leaf
 *    (RegisterLeafModuleRule);
 *  - the op's kernel computes input * scale + shift on float32 tensors
 *    (CallTensorArg, CallTensorMeta, CallIntArg, CallHasArg, CallFloatArg),
 *    its shape function reads the input's metadata (CallTensorMeta);
 *  - pass `first_release_mark` renames torch.relu to torch.sigmoid and
 *    records each node's user count in meta "first_release_users";
 *  - each fails unless its table says version 1. */
#include <stdlib.h>
#include <string.h>

#include "fx/plugin_api.h"

#if FX_API_VERSION != 1
#error "first_release_plugin.c must be compiled against the first release"
#endif

static FxStatus* expect_version_1(const FxApi* api) {
  if (api->version == 1) return NULL;
  return api->CreateStatus(FX_FAILED_PRECONDITION,
                           "first_release_plugin was handed a table that is "
                           "not version 1");
}

static FxStatus* mark(const FxApi* api, FxGraph* graph,
                      const FxOptions* options, void* user_data, int* changed) {
  FxNode* n;
  FxStatus* s = expect_version_1(api);
  (void)options;
  (void)user_data;
  if (s != NULL) return s;
  for (n = api->GraphFirstNode(graph); n != NULL; n = api->NodeNext(n)) {
    FxArg* users = NULL;
    s = api->CreateInt((int64_t)api->NodeNumUsers(n), &users);
    if (s == NULL) s = api->NodeSetMeta(n, "first_release_users", users);
    api->ReleaseArg(users);
    if (s == NULL && api->NodeOp(n) == FX_OP_CALL_FUNCTION &&
        strcmp(api->NodeTarget(n), "torch.relu") == 0) {
      s = api->NodeSetTarget(n, "torch.sigmoid");
    }
    if (s != NULL) return s;
  }
  *changed = 1;
  return api->GraphLint(graph);
}

/* A float32 tensor the plugin allocated, freed by its deleter. */
typedef struct Owned {
  DLManagedTensor managed;
  int64_t shape[FX_MAX_DIMS];
} Owned;

static void free_owned(DLManagedTensor* t) {
  free(t->dl_tensor.data);
  free(t->manager_ctx);
}

static FxStatus* affine_kernel(const FxApi* api, const FxOpCall* call,
                               void* user_data, DLManagedTensor** out) {
  DLManagedTensor* input = NULL;
  FxTensorMeta meta;
  int64_t scale = 0, count = 1;
  double shift = 0.0;
  int32_t d;
  Owned* result;
  const float* x;
  float* y;
  FxStatus* s = expect_version_1(api);
  (void)user_data;
  if (s == NULL) s = api->CallTensorMeta(call, "input", &meta);
  if (s == NULL && (meta.dtype.code != kDLFloat || meta.dtype.bits != 32)) {
    s = api->CreateStatus(FX_INVALID_ARGUMENT, "affine takes float32 only");
  }
  if (s == NULL) s = api->CallIntArg(call, "scale", &scale);
  if (s == NULL && api->CallHasArg(call, "shift")) {
    s = api->CallFloatArg(call, "shift", &shift);
  }
  if (s == NULL) s = api->CallTensorArg(call, "input", &input);
  if (s != NULL) return s;
  result = (Owned*)calloc(1, sizeof(Owned));
  for (d = 0; d < meta.ndim; ++d) count *= meta.shape[d];
  y = (float*)malloc((size_t)(count > 0 ? count : 1) * sizeof(float));
  x = (const float*)((const char*)input->dl_tensor.data +
                     input->dl_tensor.byte_offset);
  for (d = 0; d < meta.ndim; ++d) result->shape[d] = meta.shape[d];
  /* The input is contiguous in the tests; its strides are not read. */
  for (int64_t i = 0; i < count; ++i) {
    y[i] = (float)(x[i] * (double)scale + shift);
  }
  input->deleter(input);
  result->managed.dl_tensor.data = y;
  result->managed.dl_tensor.device.device_type = kDLCPU;
  result->managed.dl_tensor.ndim = meta.ndim;
  result->managed.dl_tensor.dtype = meta.dtype;
  result->managed.dl_tensor.shape = result->shape;
  result->managed.manager_ctx = result;
  result->managed.deleter = free_owned;
  *out = &result->managed;
  return NULL;
}

static FxStatus* affine_shape(const FxApi* api, const FxOpCall* call,
                              void* user_data, FxTensorSpec* out) {
  FxTensorMeta meta;
  int32_t d;
  FxStatus* s = expect_version_1(api);
  (void)user_data;
  if (s == NULL) s = api->CallTensorMeta(call, "input", &meta);
  if (s != NULL) return s;
  out->ndim = meta.ndim;
  for (d = 0; d < meta.ndim && d < FX_MAX_DIMS; ++d) {
    out->shape[d] = meta.shape[d];
  }
  out->dtype = meta.dtype;
  return NULL;
}

static int block_is_leaf(const char* module_type, const char* qualified_name,
                         void* user_data) {
  (void)qualified_name;
  (void)user_data;
  return strcmp(module_type, "first_release.Block") == 0 ? 1 : -1;
}

static FxStatus* register_extensions(const FxApi* api, FxRegistrar* registrar) {
  static const FxCustomOp kAffine = {"first_release.affine",
                                     "input, scale, shift=None", affine_kernel,
                                     affine_shape, NULL};
  FxStatus* s = expect_version_1(api);
  if (s == NULL) s = api->RegisterCustomOp(registrar, &kAffine);
  if (s == NULL) s = api->RegisterLeafModuleRule(registrar, block_is_leaf, NULL);
  return s;
}

static const FxPassInfo kPasses[] = {
    {"first_release_mark",
     "renames relu to sigmoid, records user counts in meta",
     NULL,
     0,
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     mark,
     NULL}};

static const FxPluginInfo kPlugin = {"first_release_plugin",
                                     "1.0",
                                     1,
                                     1,
                                     kPasses,
                                     1,
                                     register_extensions};

FX_PLUGIN_EXPORT const FxPluginInfo* fx_plugin_get_info(void) {
  return &kPlugin;
}
