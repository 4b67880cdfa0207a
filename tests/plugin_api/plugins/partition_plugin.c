/* A vendor backend's partitioning in plain C99 (API version 3): its support
 * rule is declared from the pass options (targets by opcode, get_attr, and a
 * callback declining nodes by name), the host proposes partitions, and
 * either marks them (meta['partition'] = index) or fuses each into a child
 * GraphModule. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fx/plugin_api.h"

/* The names the callback declines, from the option "decline". */
typedef struct Declined {
  const FxApi* api;
  const char** names;
  size_t count;
} Declined;

static int not_declined(const FxNode* node, void* user_data) {
  const Declined* d = (const Declined*)user_data;
  const char* name = d->api->NodeName(node);
  size_t i;
  for (i = 0; i < d->count; ++i) {
    if (strcmp(d->names[i], name) == 0) return 0;
  }
  return 1;
}

/* Reads string-list option `name` into a malloc'ed array (*out, *count). */
static FxStatus* read_list(const FxApi* api, const FxOptions* options,
                           const char* name, const char*** out, size_t* count) {
  size_t i;
  FxStatus* status = api->OptionsGetListSize(options, name, count);
  if (status != NULL) return status;
  *out = (const char**)malloc((*count ? *count : 1) * sizeof(char*));
  if (*out == NULL) return api->CreateStatus(FX_INTERNAL, "out of memory");
  for (i = 0; i < *count; ++i) {
    status = api->OptionsGetListItem(options, name, i, &(*out)[i]);
    if (status != NULL) return status;
  }
  return NULL;
}

/* The rule of the options: any_of(targets..., get_attr?) and not declined. */
static FxStatus* build_rule(const FxApi* api, const FxOptions* options,
                            Declined* declined, FxSupport** rule) {
  static const char* const kLists[3] = {"functions", "methods", "module_types"};
  static const FxOpcode kOps[3] = {FX_OP_CALL_FUNCTION, FX_OP_CALL_METHOD,
                                   FX_OP_CALL_MODULE};
  FxSupport* parts[4] = {NULL, NULL, NULL, NULL};
  FxSupport* both[2] = {NULL, NULL};
  size_t num_parts = 0, i, count = 0;
  const char** names = NULL;
  int get_attr = 0;
  FxStatus* status = NULL;
  for (i = 0; status == NULL && i < 3; ++i) {
    status = read_list(api, options, kLists[i], &names, &count);
    if (status == NULL) {
      status = api->SupportTargets(kOps[i], names, count, &parts[num_parts]);
      if (status == NULL) ++num_parts;
    }
    free((void*)names);
    names = NULL;
  }
  if (status == NULL)
    status = api->OptionsGetBool(options, "get_attr", &get_attr);
  if (status == NULL && get_attr) {
    FxOpcode op = FX_OP_GET_ATTR;
    status = api->SupportOpcodes(&op, 1, &parts[num_parts]);
    if (status == NULL) ++num_parts;
  }
  if (status == NULL) {
    status =
        api->SupportAnyOf((const FxSupport* const*)parts, num_parts, &both[0]);
  }
  if (status == NULL) {
    status =
        read_list(api, options, "decline", &declined->names, &declined->count);
  }
  if (status == NULL) {
    status = api->SupportCallback(not_declined, declined, &both[1]);
  }
  if (status == NULL) {
    status = api->SupportAllOf((const FxSupport* const*)both, 2, rule);
  }
  for (i = 0; i < num_parts; ++i) api->ReleaseSupport(parts[i]);
  api->ReleaseSupport(both[0]);
  api->ReleaseSupport(both[1]);
  return status;
}

static FxStatus* propose(const FxApi* api, FxGraph* graph,
                         const FxOptions* options, FxPartitions** out) {
  Declined declined = {NULL, NULL, 0};
  FxSupport* rule = NULL;
  FxPartitionOptions o;
  int64_t min_size = 0;
  FxStatus* status;
  declined.api = api;
  memset(&o, 0, sizeof(o));
  o.struct_size = sizeof(o);
  status = build_rule(api, options, &declined, &rule);
  if (status == NULL) {
    status = api->OptionsGetBool(options, "allows_single",
                                 &o.allows_single_node_partition);
  }
  if (status == NULL)
    status = api->OptionsGetInt(options, "min_size", &min_size);
  if (status == NULL) {
    o.min_partition_size = (size_t)min_size;
    status = api->GraphProposePartitions(graph, rule, &o, out);
  }
  api->ReleaseSupport(rule);
  free((void*)declined.names);
  return status;
}

static FxStatus* mark(const FxApi* api, FxGraph* graph,
                      const FxOptions* options, void* user_data, int* changed) {
  FxPartitions* parts = NULL;
  size_t i, j;
  FxStatus* status = propose(api, graph, options, &parts);
  (void)user_data;
  for (i = 0; status == NULL && i < api->PartitionsCount(parts); ++i) {
    FxArg* index = NULL;
    status = api->CreateInt((int64_t)i, &index);
    for (j = 0; status == NULL && j < api->PartitionSize(parts, i); ++j) {
      status =
          api->NodeSetMeta(api->PartitionNode(parts, i, j), "partition", index);
      *changed = 1;
    }
    api->ReleaseArg(index);
  }
  api->ReleasePartitions(parts);
  return status;
}

static FxStatus* fuse(const FxApi* api, FxGraph* graph,
                      const FxOptions* options, void* user_data, int* changed) {
  FxPartitions* parts = NULL;
  const char* prefix = NULL;
  FxStatus* status = propose(api, graph, options, &parts);
  (void)user_data;
  if (status == NULL)
    status = api->OptionsGetString(options, "prefix", &prefix);
  if (status == NULL && api->PartitionsCount(parts) > 0) {
    status = api->GraphFusePartitions(graph, parts, prefix);
    *changed = status == NULL;
  }
  api->ReleasePartitions(parts);
  return status;
}

static const FxOptionSpec kOptions[] = {
    {"functions", FX_OPTION_STRING_LIST, "", "supported call_function targets"},
    {"methods", FX_OPTION_STRING_LIST, "", "supported call_method names"},
    {"module_types", FX_OPTION_STRING_LIST, "", "supported module types"},
    {"get_attr", FX_OPTION_BOOL, "false", "partitions may read attributes"},
    {"decline", FX_OPTION_STRING_LIST, "", "node names never supported"},
    {"allows_single", FX_OPTION_BOOL, "false",
     "keep single-compute-node partitions"},
    {"min_size", FX_OPTION_INT, "0", "drop smaller partitions"},
    {"prefix", FX_OPTION_STRING, "fused_", "child module name prefix"}};

static const FxPassInfo kPasses[] = {
    {"mark_partitions",
     "meta['partition'] = index of each proposed partition's nodes",
     kOptions,
     7,
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     mark,
     NULL,
     {0, 0},
     0},
    {"fuse_partitions",
     "fuses each proposed partition into a child GraphModule",
     kOptions,
     8,
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     fuse,
     NULL,
     {0, 0},
     0}};

static const FxPluginInfo kPlugin = {"partition_plugin",
                                     "1.0",
                                     FX_API_VERSION,
                                     3,
                                     kPasses,
                                     2,
                                     NULL,
                                     sizeof(FxPluginInfo),
                                     sizeof(FxPassInfo)};

FX_PLUGIN_EXPORT const FxPluginInfo* fx_plugin_get_info(void) {
  return &kPlugin;
}
