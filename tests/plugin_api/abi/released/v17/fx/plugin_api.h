/* fx plugin API: the stable C contract between the fx host and pass plugins.
 *
 * A plugin is a shared library that exports one function,
 *
 *     FX_PLUGIN_EXPORT const FxPluginInfo* fx_plugin_get_info(void);
 *
 * returning static data: the plugin's name and version, the API version it was
 * built against and the oldest it accepts, and its passes. The host calls a
 * pass's `run` with a function table (FxApi) and the graph to transform. Only
 * C crosses this boundary: opaque handles, plain structs, function pointers,
 * DLPack tensors. No C++ types, no exceptions.
 *
 * Rules of the table
 *  - FxApi only grows: new functions are appended, none is removed or
 *    reordered, so a plugin built against version N runs on any host >= N.
 *    Every addition bumps FX_API_VERSION; the layout of each released version
 *    is frozen by the test suite (an offsetof check per entry and an ABI
 *    baseline, tests/plugin_api/abi).
 *  - Negotiation. The host loads a plugin when its `min_api_version` is at
 *    most the host's FX_API_VERSION, and refuses it (naming the plugin and
 *    both versions) before calling any of its passes or registrations
 *    otherwise. Each plugin is handed a table of version
 *    min(plugin's api_version, host's FX_API_VERSION): `FxApi.version` says
 *    which entries are filled in; entries of later versions are NULL. A
 *    plugin that runs on older hosts than it was built for checks
 *    `api->version` before calling an entry newer than its min_api_version
 *    (the C++ wrapper does, and fails with FX_UNIMPLEMENTED otherwise).
 *
 * Rules of the structs (how a struct grows without breaking old binaries)
 *  - A field is only ever appended, never inserted or removed, and each
 *    appended field comes with the version that added it.
 *  - Structs the plugin fills and the host reads are sized by the plugin:
 *    FxPluginInfo.struct_size and FxPluginInfo.pass_info_size (version 2).
 *    FxPluginInfo.api_version sits at an offset every version shares, so the
 *    host reads it first and reads the size fields only from plugins built
 *    against version 2 or later; a version-1 plugin has the version-1
 *    layouts. FxPassInfo's size is in FxPluginInfo rather than in FxPassInfo
 *    because `passes` is an array: the host needs its element size before it
 *    can find any element (and an appended field of FxPassInfo itself could
 *    not be found without it). A size of 0 means "the layout of the header
 *    of `api_version`", so a plugin that does not set them keeps loading on
 *    every host at least as new as its api_version. FxPassInfo grew in
 *    version 6 (tolerance, idempotent): the host reads those fields only
 *    from plugins with api_version >= 6 whose pass_info_size covers them.
 *  - Structs the host writes into memory the plugin owns are sized by the
 *    plugin too: FxTensorMeta.struct_size (version 2), read by the version-2
 *    entries ValueTensorMeta2 / CallTensorMeta2, which write only the fields
 *    that fit. The version-1 entries ValueTensorMeta / CallTensorMeta write
 *    exactly the version-1 fields forever.
 *  - Structs the host allocates and the plugin writes (FxTensorSpec) carry
 *    the host's size (struct_size, version 2), set before the plugin's
 *    function is called; a plugin reads it only when `api->version >= 2`.
 *  - Every call that can fail returns FxStatus*: NULL means success; otherwise
 *    the caller owns the status and frees it with ReleaseStatus. Getters that
 *    cannot fail on valid handles return their value directly (NULL / 0 for a
 *    NULL handle).
 *
 * Ownership, stated once for every handle kind
 *  - FxStatus*: owned by whoever receives it; ReleaseStatus.
 *  - FxGraph*: borrowed from the host for the duration of `run` (as are the
 *    subgraphs GraphAddSubgraphModule returns); one from CreateGraph is
 *    owned by the caller, ReleaseGraph.
 *  - FxNode*: borrowed; valid while the node is in its graph, and an erased
 *    node stays readable until `run` returns.
 *  - FxGraph* and FxNode* are checked handles, not addresses: once the
 *    object is gone (a graph rolled back after a failed pass, replaced, or
 *    released and freed; a node purged) its handle is stale for good, even
 *    if a new object takes its memory. A stale handle is refused: entries
 *    returning FxStatus* fail with FX_FAILED_PRECONDITION, getters answer as
 *    for NULL. Do not keep handles across passes; ask for fresh ones.
 *  - FxArg*: returned by Create* / Clone*: owned by the caller, ReleaseArg.
 *    `const FxArg*` returned by getters: borrowed, valid until the node or
 *    argument it came from is changed or released. Functions that take
 *    arguments copy them; the caller keeps ownership of what it passed.
 *    FxArg* and FxMatch* are checked handles too: a released argument, one
 *    borrowed from a node, argument or match that is gone (or no longer has
 *    that index), and a match kept after its callback are refused as above.
 *    A borrowed argument reads its source again each time: after the node's
 *    args change it reads the new value at its index (ask again rather than
 *    count on either).
 *  - char* returned by functions with an FxString out-parameter: owned by the
 *    caller, ReleaseString. `const char*` from getters: borrowed, valid as long
 *    as the handle it came from.
 *  - DLManagedTensor*: ownership moves with the pointer; the receiver calls
 *    its deleter when done.
 *  - FxOptions*: borrowed for the duration of `run`.
 *  - FxValue*, FxMatch*: borrowed for the duration of the callback that
 *    receives them; FxTensorMeta pointers inside are borrowed from the value.
 *  - FxSupport*, FxPartitions* (version 3): owned by the caller,
 *    ReleaseSupport / ReleasePartitions. A rule made from others copies
 *    what it needs: the parts may be released at once. A callback's
 *    user_data is borrowed until the rule (and every rule made from it) is
 *    released. FxNode* read from an FxPartitions are borrowed from the graph
 *    and valid while their nodes are.
 *  - FxRegistrar*: borrowed during register_extensions; FxOpCall*: during the
 *    kernel or shape function call. Custom ops, leaf-module rules and
 *    (version 4) capture decompositions and leaf ops stay registered, and
 *    their plugin loaded, for the life of the process.
 *  - FxShapeEnv* (version 8): owned by the caller, ReleaseShapeEnv; the
 *    strings read from it are borrowed from it.
 *  - Backends (version 5): registered for the life of the process. A
 *    compiled object is the backend's, from its `compile` until the host
 *    calls its `release` (once, when the delegated module goes); the
 *    partition graph handed to `compile` is borrowed for as long (read it,
 *    run it with GraphRun; never change it).
 */
#ifndef FX_PLUGIN_API_H_
#define FX_PLUGIN_API_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h> /* memset, for FX_TENSOR_META_INIT */

#ifdef __cplusplus
extern "C" {
#endif

/* The API version this header describes.
 *
 * A release is a header that landed on the project's main branch: from then
 * on plugins may be built against it, so its entries and struct fields stay
 * where they are forever, and any change is appended under a new version
 * number. Each released header is kept frozen, byte for byte, in
 * tests/plugin_api/abi/released/, and the ABI tests serve every one of them.
 * Version 1 was released twice with different tables (106 entries, then 123
 * with fourteen inserted before RegisterCustomOp); the host serves both
 * (released/README.md, "Version 1, twice"). */
#define FX_API_VERSION 17

#if defined(_WIN32)
#define FX_PLUGIN_EXPORT __declspec(dllexport)
#else
#define FX_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* The symbol every plugin exports. */
#define FX_PLUGIN_ENTRY_POINT "fx_plugin_get_info"

/* ------------------------------------------------------------ handles */

typedef struct FxStatus FxStatus;
typedef struct FxGraph FxGraph;
typedef struct FxNode FxNode;
typedef struct FxArg FxArg;
typedef struct FxOptions FxOptions;
typedef struct FxShapeEnv FxShapeEnv; /* version 8 */

typedef enum FxStatusCode {
  FX_OK = 0,
  FX_INVALID_ARGUMENT = 1,    /* a bad handle, index, kind or value */
  FX_NOT_FOUND = 2,           /* a name that does not exist */
  FX_FAILED_PRECONDITION = 3, /* e.g. erasing a node that has users */
  FX_UNIMPLEMENTED = 4,       /* not supported by this host */
  FX_INTERNAL = 5             /* anything else, including exceptions */
} FxStatusCode;

/* torch.fx's six opcodes. */
typedef enum FxOpcode {
  FX_OP_PLACEHOLDER = 0,
  FX_OP_GET_ATTR = 1,
  FX_OP_CALL_FUNCTION = 2,
  FX_OP_CALL_METHOD = 3,
  FX_OP_CALL_MODULE = 4,
  FX_OP_OUTPUT = 5
} FxOpcode;

/* The kinds of argument values (torch.fx's Argument). */
typedef enum FxArgKind {
  FX_ARG_NONE = 0,
  FX_ARG_BOOL = 1,
  FX_ARG_INT = 2,
  FX_ARG_FLOAT = 3,
  FX_ARG_STRING = 4,
  FX_ARG_NODE = 5,
  FX_ARG_LIST = 6,
  FX_ARG_TUPLE = 7,
  FX_ARG_DICT = 8,
  FX_ARG_SLICE = 9,
  FX_ARG_ELLIPSIS = 10,
  FX_ARG_DTYPE = 11,         /* "torch.float32" */
  FX_ARG_DEVICE = 12,        /* "cpu", "cuda:0" */
  FX_ARG_MEMORY_FORMAT = 13, /* "torch.contiguous_format" */
  FX_ARG_LAYOUT = 14         /* "torch.strided" */
  /* A symbolic int (a size such as "2*t0.size(0)" in a symbolic graph's
   * meta) has no kind of its own: ArgKind says FX_ARG_STRING, so switch
   * statements written before it existed keep working, and ArgIsSymInt
   * (version 8) tells it from a string. */
} FxArgKind;

/* --------------------------------------------------------- pass options */

typedef enum FxOptionType {
  FX_OPTION_BOOL = 0,
  FX_OPTION_INT = 1,
  FX_OPTION_FLOAT = 2,
  FX_OPTION_STRING = 3,
  FX_OPTION_STRING_LIST = 4 /* comma-separated in text pipelines */
} FxOptionType;

/* One typed option of a pass. `default_value` is in text form ("true",
 * "8", "0.5", "int8", "relu,gelu") and must parse as `type`. */
typedef struct FxOptionSpec {
  const char* name;
  FxOptionType type;
  const char* default_value;
  const char* description;
} FxOptionSpec;

/* A pass's body. Returns NULL on success. Sets *changed to 1 when it changed
 * the graph (0 otherwise). On failure the host restores the graph exactly as
 * it was before the pass. */
typedef struct FxApi FxApi;
typedef FxStatus* (*FxPassRunFn)(const FxApi* api, FxGraph* graph,
                                 const FxOptions* options, void* user_data,
                                 int* changed);

/* A list of names: count and array. */
typedef struct FxNameList {
  const char* const* names;
  size_t count;
} FxNameList;

/* How far a pass may move the numbers (version 6): on the same inputs, each
 * floating-point element the transformed graph computes is within
 * atol + rtol * |expected| of what the unchanged graph computes (torch's
 * allclose). {0, 0} declares nothing: a checker applies its own tolerance.
 * Both must be finite and >= 0. */
typedef struct FxTolerance {
  double rtol;
  double atol;
} FxTolerance;

typedef struct FxPassInfo {
  const char* name;        /* unique within the plugin: "shape_prop" */
  const char* description; /* one line */
  const FxOptionSpec* options;
  size_t num_options;
  FxNameList run_after;   /* when both run, these run before this pass */
  FxNameList run_before;  /* when both run, these run after this pass */
  FxNameList required;    /* properties that must hold ("tensor_meta") */
  FxNameList produces;    /* properties this pass establishes */
  FxNameList invalidates; /* properties this pass destroys; "signature":
                             it may change the placeholders (which the host
                             otherwise requires every pass to keep), and
                             the example inputs go with them (version 11) */
  FxPassRunFn run;
  void* user_data;

  /* Version 6 (read only from plugins with api_version >= 6 whose
   * pass_info_size covers them; every other plugin gets the zero values:
   * no tolerance declared, not declared idempotent). */
  FxTolerance tolerance; /* see FxTolerance; {0, 0}: none declared */
  int32_t idempotent;    /* 1: running the pass on its own output changes
                            nothing (twice equals once); 0: not declared */
} FxPassInfo;

/* Registers a plugin's tracer and runtime extensions (custom ops,
 * leaf-module rules; see below). Called once when the plugin is loaded,
 * before any of its passes. */
typedef struct FxRegistrar FxRegistrar; /* borrowed during registration */
typedef FxStatus* (*FxRegisterFn)(const FxApi* api, FxRegistrar* registrar);

typedef struct FxPluginInfo {
  const char* name;         /* "fx_passes" */
  const char* version;      /* the plugin's own version, free form */
  uint32_t api_version;     /* FX_API_VERSION it was built against */
  uint32_t min_api_version; /* the oldest host API it runs on */
  const FxPassInfo* passes;
  size_t num_passes;
  /* Tracer and runtime extensions to register at load time, or NULL. */
  FxRegisterFn register_extensions;

  /* Version 2 (read only when api_version >= 2; 0: the sizes of the header
   * of api_version, see "Rules of the structs" above). */
  uint32_t struct_size;    /* sizeof(FxPluginInfo) */
  uint32_t pass_info_size; /* sizeof(FxPassInfo): the stride of `passes` */
} FxPluginInfo;

typedef const FxPluginInfo* (*FxPluginGetInfoFn)(void);

/* ------------------------------------------------------- runtime values
 *
 * What nodes compute when the host runs a graph (GraphRun) or evaluates a
 * constant subgraph (GraphEvaluate). An FxValue is borrowed for the duration
 * of the callback that receives it. */
typedef struct FxValue FxValue;

typedef enum FxValueKind {
  FX_VALUE_NONE = 0,
  FX_VALUE_TENSOR = 1,
  FX_VALUE_BOOL = 2,
  FX_VALUE_INT = 3,
  FX_VALUE_FLOAT = 4,
  FX_VALUE_STRING = 5,
  FX_VALUE_SEQUENCE = 6, /* tuple, list, torch.Size: ValueSize / ValueItem */
  FX_VALUE_OTHER = 7
} FxValueKind;

/* A tensor's metadata: torch.fx's TensorMetadata. Pointers are borrowed from
 * the value they describe. */
typedef struct FxTensorMeta {
  int32_t ndim;
  const int64_t* shape;
  const int64_t* strides;
  DLDataType dtype;          /* the storage type (int8 for torch.qint8) */
  const char* dtype_name;    /* "torch.float32", "torch.qint8" */
  const char* memory_format; /* "torch.contiguous_format",
                                "torch.channels_last", ... or "" */
  int requires_grad;
  int is_quantized;
  const char* qscheme; /* "torch.per_tensor_affine", ...; "" if none */
  double scale;        /* per-tensor quantization */
  int64_t zero_point;
  int64_t axis;        /* per-channel quantization axis, or -1 */
  size_t num_channels; /* per-channel scales and zero points */
  const double* scales;
  const int64_t* zero_points;

  /* Version 2: sizeof(FxTensorMeta), set by the caller before calling
   * ValueTensorMeta2 / CallTensorMeta2 (FX_TENSOR_META_INIT does). The
   * version-1 entries neither read nor write it. */
  uint32_t struct_size;
} FxTensorMeta;

/* An FxTensorMeta ready for ValueTensorMeta2 / CallTensorMeta2. */
#define FX_TENSOR_META_INIT(meta)      \
  do {                                 \
    memset(&(meta), 0, sizeof(meta));  \
    (meta).struct_size = sizeof(meta); \
  } while (0)

/* Called with each node's value, in graph order. Return NULL to go on, or
 * a status (owned by the host from then on) to stop the run with it. */
typedef FxStatus* (*FxNodeValueFn)(FxNode* node, const FxValue* value,
                                   void* user_data);

/* ------------------------------------------------------ subgraph rewriting
 *
 * torch.fx's SubgraphMatcher and replace_pattern, for patterns and
 * replacements the plugin builds as standalone graphs (CreateGraph, then
 * placeholders, ops and one output through GraphCreateNode or the C++
 * wrapper's Values). */
typedef struct FxMatch FxMatch; /* borrowed for the callback */

/* Flags of GraphMatchPattern / GraphReplacePattern. */
#define FX_REWRITE_IGNORE_LITERALS 1u       /* `x + 1` matches `x + 3` */
#define FX_REWRITE_MATCH_MODULES_BY_TYPE 2u /* call_module by module type */
#define FX_REWRITE_NO_META 4u /* do not carry meta to replacement nodes */

/* Keeps (1) or drops (0) a match before anything changes. */
typedef int (*FxMatchFilterFn)(const FxMatch* match, void* user_data);
/* Called with each match (or replacement made); a status stops. */
typedef FxStatus* (*FxMatchFn)(const FxMatch* match, void* user_data);

/* ------------------------------------------------------ tracer extensions
 *
 * A plugin may extend the host's tracer and runtime when it is loaded:
 * custom ops (recorded as call_function nodes, run by their kernel, shape
 * propagated by their shape function) and leaf-module rules. */
typedef struct FxOpCall FxOpCall; /* borrowed during a kernel call */

/* A tensor's shape and dtype, written by a shape function. */
#define FX_MAX_DIMS 16
typedef struct FxTensorSpec {
  int32_t ndim;
  int64_t shape[FX_MAX_DIMS];
  DLDataType dtype;
  /* Version 2: sizeof(FxTensorSpec) as the host knows it, set by the host
   * before the shape function runs; read it only when api->version >= 2. */
  uint32_t struct_size;
} FxTensorSpec;

/* The op's computation: reads its arguments from `call` and returns the
 * result tensor (ownership moves to the host). */
typedef FxStatus* (*FxOpKernelFn)(const FxApi* api, const FxOpCall* call,
                                  void* user_data, DLManagedTensor** out);
/* The op's shape function: the result's shape and dtype from the arguments'
 * metadata (CallTensorMeta), without data. */
typedef FxStatus* (*FxOpShapeFn)(const FxApi* api, const FxOpCall* call,
                                 void* user_data, FxTensorSpec* out);

typedef struct FxCustomOp {
  const char* target;    /* the call_function target: "my_vendor.fused_gelu" */
  const char* signature; /* Python style: "input, alpha=1.0" */
  FxOpKernelFn kernel;
  /* May be NULL: the op then cannot run on meta tensors (shape_prop, meta
   * capture), and such a run fails with an error naming the op. */
  FxOpShapeFn shape;
  void* user_data;
} FxCustomOp;

/* Whether the module at `qualified_name`, of Python type `module_type`
 * ("torch.nn.Conv2d", "my_vendor.FusedBlock"), is a leaf: 1, 0, or -1 for
 * "no opinion" (the next rule, then the tracer's default, decides). */
typedef int (*FxLeafModuleFn)(const char* module_type,
                              const char* qualified_name, void* user_data);

/* ------------------------------------------------ partitioning (version 3)
 *
 * torch.fx's OperatorSupport, CapabilityBasedPartitioner and
 * fuse_by_partitions: a plugin declares which nodes its backend runs (a
 * support rule, FxSupport), asks the host for the largest partitions of
 * supported nodes that fuse without a cycle (FxPartitions), and fuses each
 * into a call_module of a child GraphModule. */
typedef struct FxSupport FxSupport;
typedef struct FxPartitions FxPartitions;

/* A plugin's own support test: 1 supported, 0 not, -1 to stop partitioning
 * with an error (FX_INTERNAL naming the node). */
typedef int (*FxIsNodeSupportedFn)(const FxNode* node, void* user_data);

/* Which tensors an FxTensorRule looks at (flags). */
#define FX_TENSOR_RULE_OUTPUT 1u    /* the node's own tensor_meta */
#define FX_TENSOR_RULE_INPUTS 2u    /* its input nodes' (not get_attr inputs) */
#define FX_TENSOR_RULE_ANY_INPUT 4u /* one passing input suffices */

/* Limits on meta['tensor_meta'] (a node returning several tensors: every
 * one). A node looked at without tensor_meta is not supported. */
typedef struct FxTensorRule {
  uint32_t struct_size;      /* sizeof(FxTensorRule) */
  uint32_t flags;            /* FX_TENSOR_RULE_*; 0 means OUTPUT */
  const char* const* dtypes; /* "torch.float32", ...; none: any dtype */
  size_t num_dtypes;
  int64_t min_rank;
  int64_t max_rank;     /* < 0: no limit */
  int64_t max_dim_size; /* < 0: no limit */
} FxTensorRule;

typedef struct FxPartitionOptions {
  uint32_t struct_size; /* sizeof(FxPartitionOptions) */
  /* Keep partitions with a single compute node (torch.fx's option). */
  int allows_single_node_partition;
  /* Drop partitions of fewer nodes (0: keep all). */
  size_t min_partition_size;
} FxPartitionOptions;

/* -------------------------------------------------- delegation (version 5)
 *
 * A vendor backend, registered by a plugin at load time (RegisterBackend in
 * register_extensions), runs partitions of graphs. GraphDelegatePartitions
 * fuses each partition into a child GraphModule (as GraphFusePartitions
 * does) and hands it to the backend's `compile` once, when the delegated
 * module is made (not per call); the call_module node of the partition then
 * runs the backend's `run` on the compiled object. The host runs the rest of
 * the graph. */

/* Compiles one partition: `partition` is its graph (owned by a child
 * GraphModule: GraphGetAttr, GraphModuleType and GraphModuleConfig read its
 * weights and modules; GraphRun runs it), `name` its call_module target
 * ("accelerator_0"), `graph_json` the same graph as fx-graph JSON text
 * (docs/fx-graph-json.md, without weights), `inputs` the shape
 * and dtype of each placeholder (from its meta['tensor_meta']). Sets
 * *compiled (the backend's own object, passed back to run and release) or
 * returns a status saying why the partition cannot be compiled. */
typedef FxStatus* (*FxBackendCompileFn)(const FxApi* api, FxGraph* partition,
                                        const char* name,
                                        const char* graph_json,
                                        const FxTensorSpec* inputs,
                                        size_t num_inputs, void* user_data,
                                        void** compiled);
/* Runs a compiled partition on `inputs` (borrowed for the call, one per
 * placeholder) and sets `outputs[0 .. num_outputs)` (one per value the
 * partition returns; ownership moves to the host). */
typedef FxStatus* (*FxBackendRunFn)(const FxApi* api, void* compiled,
                                    const DLTensor* const* inputs,
                                    size_t num_inputs,
                                    DLManagedTensor** outputs,
                                    size_t num_outputs, void* user_data);
/* Frees a compiled object. */
typedef void (*FxBackendReleaseFn)(void* compiled, void* user_data);

typedef struct FxBackendInfo {
  uint32_t struct_size; /* sizeof(FxBackendInfo) */
  const char* name;     /* unique in the process: "accelerator" */
  FxBackendCompileFn compile;
  FxBackendRunFn run;
  FxBackendReleaseFn release; /* may be NULL: nothing to free */
  void* user_data;
} FxBackendInfo;

/* ------------------------------------------------------- the function table
 *
 * Append new entries at the end only, under a "Version N" heading, and bump
 * FX_API_VERSION. Version 1 is every entry up to NodeUsers (its second
 * release; the first had RegisterCustomOp .. CallFloatArg at the slots
 * GraphNumExampleInputs .. GraphReplacePattern hold here, and the host still
 * serves it). */
struct FxApi {
  uint32_t version; /* how many versions of entries below are filled in */

  /* Status ---------------------------------------------------------------- */
  FxStatus* (*CreateStatus)(FxStatusCode code, const char* message);
  FxStatusCode (*GetStatusCode)(const FxStatus* status);
  const char* (*GetStatusMessage)(const FxStatus* status);
  void (*ReleaseStatus)(FxStatus* status);
  void (*ReleaseString)(char* text);

  /* Arguments: construction (owned results; inputs are copied) ---------- */
  FxStatus* (*CreateNone)(FxArg** out);
  FxStatus* (*CreateBool)(int value, FxArg** out);
  FxStatus* (*CreateInt)(int64_t value, FxArg** out);
  FxStatus* (*CreateFloat)(double value, FxArg** out);
  FxStatus* (*CreateString)(const char* value, FxArg** out);
  FxStatus* (*CreateNodeRef)(FxNode* node, FxArg** out);
  FxStatus* (*CreateList)(const FxArg* const* items, size_t count, FxArg** out);
  FxStatus* (*CreateTuple)(const FxArg* const* items, size_t count,
                           FxArg** out);
  FxStatus* (*CreateDict)(const char* const* keys, const FxArg* const* values,
                          size_t count, FxArg** out);
  FxStatus* (*CreateSlice)(const FxArg* start, const FxArg* stop,
                           const FxArg* step, FxArg** out);
  FxStatus* (*CreateEllipsis)(FxArg** out);
  /* kind is FX_ARG_DTYPE, FX_ARG_DEVICE, FX_ARG_MEMORY_FORMAT or
   * FX_ARG_LAYOUT; name as Python spells it. */
  FxStatus* (*CreateTorchValue)(FxArgKind kind, const char* name, FxArg** out);
  FxStatus* (*CloneArg)(const FxArg* arg, FxArg** out);
  void (*ReleaseArg)(FxArg* arg);

  /* Arguments: inspection ------------------------------------------------ */
  FxArgKind (*ArgKind)(const FxArg* arg);
  FxStatus* (*ArgGetBool)(const FxArg* arg, int* out);
  FxStatus* (*ArgGetInt)(const FxArg* arg, int64_t* out);
  /* Accepts ints too, as Python would. */
  FxStatus* (*ArgGetFloat)(const FxArg* arg, double* out);
  /* For strings, dtypes, devices, memory formats and layouts. */
  FxStatus* (*ArgGetString)(const FxArg* arg, const char** out);
  FxStatus* (*ArgGetNode)(const FxArg* arg, FxNode** out);
  /* Elements of a list, tuple or slice (3); items of a dict; else 0. */
  size_t (*ArgSize)(const FxArg* arg);
  /* Borrowed element i (NULL when out of range). */
  const FxArg* (*ArgItem)(const FxArg* arg, size_t index);
  /* Key of dict item i (NULL when not a dict or out of range). */
  const char* (*ArgKey)(const FxArg* arg, size_t index);
  /* Structural equality (nodes by identity): 1 or 0. */
  int (*ArgEqual)(const FxArg* a, const FxArg* b);

  /* Nodes: inspection ------------------------------------------------------ */
  FxOpcode (*NodeOp)(const FxNode* node);
  const char* (*NodeName)(const FxNode* node);
  const char* (*NodeTarget)(const FxNode* node);
  /* The type annotation ("torch.Tensor") or "" for none. */
  const char* (*NodeType)(const FxNode* node);
  FxGraph* (*NodeGraph)(const FxNode* node);
  size_t (*NodeNumArgs)(const FxNode* node);
  const FxArg* (*NodeArg)(const FxNode* node, size_t index);
  size_t (*NodeNumKwargs)(const FxNode* node);
  const char* (*NodeKwargKey)(const FxNode* node, size_t index);
  const FxArg* (*NodeKwargValue)(const FxNode* node, size_t index);
  /* The kwarg named `key`, or NULL. */
  const FxArg* (*NodeFindKwarg)(const FxNode* node, const char* key);
  size_t (*NodeNumUsers)(const FxNode* node);
  /* The index-th user. O(1) unless users were removed from a long list since
   * it was last compacted; to read them all, NodeUsers is O(users). */
  FxNode* (*NodeUser)(const FxNode* node, size_t index);
  /* all_input_nodes: distinct nodes used by args then kwargs. */
  size_t (*NodeNumInputs)(const FxNode* node);
  FxNode* (*NodeInput)(const FxNode* node, size_t index);
  /* Neighbours in graph order; NULL at either end. */
  FxNode* (*NodeNext)(const FxNode* node);
  FxNode* (*NodePrev)(const FxNode* node);
  int (*NodeIsErased)(const FxNode* node);
  int (*NodeIsImpure)(const FxNode* node);
  /* Meta: string keys to argument values. */
  size_t (*NodeNumMeta)(const FxNode* node);
  const char* (*NodeMetaKey)(const FxNode* node, size_t index);
  const FxArg* (*NodeGetMeta)(const FxNode* node, const char* key);
  /* One line of graph text (`%add : [num_users=1] = ...`). */
  FxStatus* (*NodeFormat)(const FxNode* node, char** out);

  /* Nodes: changes ----------------------------------------------------------
   * Each either succeeds completely or leaves the graph unchanged. */
  FxStatus* (*NodeSetArgs)(FxNode* node, const FxArg* const* args,
                           size_t count);
  FxStatus* (*NodeSetArg)(FxNode* node, size_t index, const FxArg* value);
  FxStatus* (*NodeSetKwargs)(FxNode* node, const char* const* keys,
                             const FxArg* const* values, size_t count);
  FxStatus* (*NodeSetKwarg)(FxNode* node, const char* key, const FxArg* value);
  FxStatus* (*NodeSetTarget)(FxNode* node, const char* target);
  FxStatus* (*NodeSetType)(FxNode* node, const char* type);
  FxStatus* (*NodeSetMeta)(FxNode* node, const char* key, const FxArg* value);
  FxStatus* (*NodeRemoveMeta)(FxNode* node, const char* key);
  /* Every user of `node` uses `replacement` instead; *num_changed (may be
   * NULL) receives how many users changed. */
  FxStatus* (*NodeReplaceAllUsesWith)(FxNode* node, FxNode* replacement,
                                      size_t* num_changed);
  FxStatus* (*NodeReplaceInputWith)(FxNode* node, FxNode* old_input,
                                    FxNode* new_input);
  /* Moves `x` to just before / after `node` (Node.prepend / Node.append). */
  FxStatus* (*NodePrepend)(FxNode* node, FxNode* x);
  FxStatus* (*NodeAppend)(FxNode* node, FxNode* x);

  /* Graphs ------------------------------------------------------------------
   */
  size_t (*GraphNumNodes)(const FxGraph* graph);
  FxNode* (*GraphFirstNode)(const FxGraph* graph);
  FxNode* (*GraphLastNode)(const FxGraph* graph);
  FxNode* (*GraphOutputNode)(const FxGraph* graph);
  /* Nodes with this opcode and target, in graph order (two calls: first with
   * out == NULL to get *count, then with room for *count nodes). */
  FxStatus* (*GraphFindNodes)(const FxGraph* graph, FxOpcode op,
                              const char* target, FxNode** out, size_t capacity,
                              size_t* count);
  /* Creates a node at the insertion point. `name` and `type` may be NULL. */
  FxStatus* (*GraphCreateNode)(FxGraph* graph, FxOpcode op, const char* target,
                               const FxArg* const* args, size_t num_args,
                               const char* const* kwarg_keys,
                               const FxArg* const* kwarg_values,
                               size_t num_kwargs, const char* name,
                               const char* type, FxNode** out);
  /* Insertion point: new nodes go just before `anchor` (after = 0) or just
   * after it (after = 1, torch.fx's inserting_after). anchor NULL with after
   * 0 means the end of the graph (the default), with after 1 the start. */
  FxStatus* (*GraphSetInsertPoint)(FxGraph* graph, FxNode* anchor, int after);
  void (*GraphGetInsertPoint)(const FxGraph* graph, FxNode** anchor,
                              int* after);
  FxStatus* (*GraphEraseNode)(FxGraph* graph, FxNode* node);
  FxStatus* (*GraphEliminateDeadCode)(FxGraph* graph, int* changed);
  FxStatus* (*GraphLint)(const FxGraph* graph);
  /* print(graph) and gm.code. */
  FxStatus* (*GraphToText)(const FxGraph* graph, char** out);
  FxStatus* (*GraphPythonCode)(const FxGraph* graph, char** out);

  /* Attributes of the owning module (parameters, buffers, constants) ----- */
  int (*GraphHasAttr)(const FxGraph* graph, const char* qualified_name);
  /* A view of the tensor (shares memory); free with its deleter. */
  FxStatus* (*GraphGetAttr)(const FxGraph* graph, const char* qualified_name,
                            DLManagedTensor** out);
  /* Adds or replaces a tensor attribute (a buffer); takes ownership. */
  FxStatus* (*GraphSetAttr)(FxGraph* graph, const char* qualified_name,
                            DLManagedTensor* tensor);
  /* The type of the module at `qualified_name` ("torch.nn.Linear"). */
  FxStatus* (*GraphModuleType)(const FxGraph* graph, const char* qualified_name,
                               char** out);

  /* Options of the running pass (declared in its schema) ------------------ */
  FxStatus* (*OptionsGetBool)(const FxOptions* options, const char* name,
                              int* out);
  FxStatus* (*OptionsGetInt)(const FxOptions* options, const char* name,
                             int64_t* out);
  FxStatus* (*OptionsGetFloat)(const FxOptions* options, const char* name,
                               double* out);
  FxStatus* (*OptionsGetString)(const FxOptions* options, const char* name,
                                const char** out);
  /* A string-list option: its size and items (borrowed). */
  FxStatus* (*OptionsGetListSize)(const FxOptions* options, const char* name,
                                  size_t* out);
  FxStatus* (*OptionsGetListItem)(const FxOptions* options, const char* name,
                                  size_t index, const char** out);

  /* Running the graph ------------------------------------------------------
   * Both need the graph's owning module (a GraphModule). */
  /* Runs the module on `inputs` (one per placeholder, borrowed) and calls
   * `on_node` after each node. meta != 0: the inputs' data is ignored (it may
   * be NULL) and the run uses meta tensors of their shape and dtype: shapes
   * propagate, nothing is computed. The graph must not be changed from
   * inside `on_node`. The run is torch.fx's gm(*inputs) (and ShapeProp's):
   * in grad mode, so a tensor value's requires_grad (ValueTensorMeta) is
   * torch.fx's; values computed from parameters that require grad require
   * grad (in a meta run, ops without a meta kernel take it from their
   * inputs). Nothing runs backward. */
  FxStatus* (*GraphRun)(FxGraph* graph, const DLTensor* const* inputs,
                        size_t num_inputs, int meta, FxNodeValueFn on_node,
                        void* user_data);
  /* Computes `node` from the module's attributes and literals alone (every
   * input must be a get_attr node or computed from them; placeholders are
   * refused) and calls `on_value` once with the result. */
  FxStatus* (*GraphEvaluate)(FxGraph* graph, FxNode* node,
                             FxNodeValueFn on_value, void* user_data);

  /* Values ------------------------------------------------------------------
   */
  FxValueKind (*ValueKind)(const FxValue* value);
  /* The Python type: "torch.Tensor", "int", "tuple", "torch.Size", ... (what
   * ShapeProp records in meta['type']). */
  const char* (*ValueTypeName)(const FxValue* value);
  FxStatus* (*ValueTensorMeta)(const FxValue* value, FxTensorMeta* out);
  /* A DLPack view of a tensor value's data (shares memory, read only; the
   * caller calls its deleter). Fails for meta tensors; quantized tensors
   * come as their integer representation. */
  FxStatus* (*ValueToDLPack)(const FxValue* value, DLManagedTensor** out);
  FxStatus* (*ValueGetBool)(const FxValue* value, int* out);
  FxStatus* (*ValueGetInt)(const FxValue* value, int64_t* out);
  FxStatus* (*ValueGetFloat)(const FxValue* value, double* out);
  size_t (*ValueSize)(const FxValue* value);
  const FxValue* (*ValueItem)(const FxValue* value, size_t index);

  /* Submodules -------------------------------------------------------------
   */
  /* Adds a GraphModule child at `qualified_name` (creating containers on the
   * way) with an empty graph, which the pass fills through `*out` (borrowed
   * for the pass); call_module nodes may then target it. Fails when the name
   * is taken. */
  FxStatus* (*GraphAddSubgraphModule)(FxGraph* graph,
                                      const char* qualified_name,
                                      FxGraph** out);

  /* Example inputs the host holds for this graph (`fx run --inputs IN.pt`):
   * how many, and a DLPack view of input `index` (read only; the caller
   * calls its deleter). */
  size_t (*GraphNumExampleInputs)(const FxGraph* graph);
  FxStatus* (*GraphExampleInput)(const FxGraph* graph, size_t index,
                                 DLManagedTensor** out);

  /* Graph.node_copy: a copy of `node` (any graph's) at the insertion point,
   * with the same opcode, target, args, kwargs, type and meta; node
   * arguments are kept as they are (they must belong to `graph`). */
  FxStatus* (*GraphNodeCopy)(FxGraph* graph, const FxNode* node, FxNode** out);

  /* Standalone graphs (patterns, replacements): owned by the caller. */
  FxStatus* (*CreateGraph)(FxGraph** out);
  void (*ReleaseGraph)(FxGraph* graph);
  /* Every non-overlapping match of `pattern` in `graph`, in graph order. */
  FxStatus* (*GraphMatchPattern)(const FxGraph* graph, const FxGraph* pattern,
                                 uint32_t flags, FxMatchFn on_match,
                                 void* user_data);
  /* replace_pattern_with_filters: replaces each match `filter` keeps (NULL:
   * all) with a copy of `replacement`; `on_replaced` (may be NULL) sees each
   * replacement made; *num_replacements (may be NULL) gets their count.
   * The graph is unchanged when the pattern or replacement is refused. */
  FxStatus* (*GraphReplacePattern)(FxGraph* graph, const FxGraph* pattern,
                                   const FxGraph* replacement, uint32_t flags,
                                   FxMatchFilterFn filter, void* filter_data,
                                   FxMatchFn on_replaced, void* replaced_data,
                                   size_t* num_replacements);
  /* A match: pattern node i and the graph value it matched (a node
   * reference, or a literal for a placeholder), the graph node the first
   * anchor matched, and (for a replacement) the nodes inserted. */
  size_t (*MatchSize)(const FxMatch* match);
  const FxNode* (*MatchPatternNode)(const FxMatch* match, size_t index);
  const FxArg* (*MatchValue)(const FxMatch* match, size_t index);
  FxNode* (*MatchAnchor)(const FxMatch* match);
  size_t (*MatchNumReplacements)(const FxMatch* match);
  FxNode* (*MatchReplacement)(const FxMatch* match, size_t index);

  /* The constructor keyword arguments of the module at `qualified_name`
   * (what a graph file's `config` holds: {"in_features": 4, "eps": 1e-05,
   * ...}) as a dict argument owned by the caller (ReleaseArg). Needs the
   * graph's owning GraphModule; FX_NOT_FOUND when there is no such module,
   * FX_UNIMPLEMENTED when its kind cannot describe itself. */
  FxStatus* (*GraphModuleConfig)(const FxGraph* graph,
                                 const char* qualified_name, FxArg** out);

  /* Registration (only inside register_extensions) ------------------------
   */
  FxStatus* (*RegisterCustomOp)(FxRegistrar* registrar, const FxCustomOp* op);
  FxStatus* (*RegisterLeafModuleRule)(FxRegistrar* registrar,
                                      FxLeafModuleFn is_leaf, void* user_data);

  /* Inside a custom op's kernel or shape function: its bound arguments, by
   * parameter name (as the signature spells it). */
  int (*CallHasArg)(const FxOpCall* call, const char* name); /* not None */
  FxStatus* (*CallTensorArg)(const FxOpCall* call, const char* name,
                             DLManagedTensor** out); /* caller frees */
  FxStatus* (*CallTensorMeta)(const FxOpCall* call, const char* name,
                              FxTensorMeta* out);
  FxStatus* (*CallIntArg)(const FxOpCall* call, const char* name, int64_t* out);
  FxStatus* (*CallFloatArg)(const FxOpCall* call, const char* name,
                            double* out);

  /* Appended ------------------------------------------------------------- */
  /* Makes the submodule, parameter or buffer at `qualified_name` of
   * `graph`'s module an attribute of `subgraph`'s module too, at the same
   * path, shared rather than copied (what torch.fx's split_module does for
   * the attributes a partition uses). `subgraph` is a graph returned by
   * GraphAddSubgraphModule for `graph`. */
  FxStatus* (*GraphShareAttr)(FxGraph* graph, FxGraph* subgraph,
                              const char* qualified_name);
  /* Adds or replaces the submodule at `qualified_name` with a new module of
   * Python type `module_type` ("torch.nn.Conv2d") built from `config` (a
   * dict of constructor keyword arguments, as GraphModuleConfig returns;
   * copied). Its parameters start as the constructor makes them; set them
   * with GraphSetAttr. A module replacing another is in the training or eval
   * mode the replaced one was in. Rolled back with the pass when it fails. */
  FxStatus* (*GraphAddModule)(FxGraph* graph, const char* qualified_name,
                              const char* module_type, const FxArg* config);
  /* Writes up to `capacity` users of `node`, in order, to `out` and returns
   * how many it has (NodeNumUsers): one call reads them all in O(users). */
  size_t (*NodeUsers)(const FxNode* node, FxNode** out, size_t capacity);

  /* Version 2 ------------------------------------------------------------- */
  /* ValueTensorMeta and CallTensorMeta for an FxTensorMeta of any version:
   * `out->struct_size` (set by the caller, FX_TENSOR_META_INIT) says how
   * big it is; the host writes the fields that fit and leaves struct_size
   * as it was. FX_INVALID_ARGUMENT when struct_size is smaller than the
   * version-1 fields. */
  FxStatus* (*ValueTensorMeta2)(const FxValue* value, FxTensorMeta* out);
  FxStatus* (*CallTensorMeta2)(const FxOpCall* call, const char* name,
                               FxTensorMeta* out);

  /* Version 3: partitioning ---------------------------------------------- */
  /* Nodes of opcode `op` whose target is listed: FX_OP_CALL_FUNCTION targets
   * in any of torch's spellings (operator.add = _operator.add;
   * torch.ops.aten.add = aten::add names every overload, aten::add.Tensor
   * one), FX_OP_CALL_METHOD names, FX_OP_CALL_MODULE module types
   * (torch.nn.Conv2d = torch.nn.modules.conv.Conv2d, looked up in the
   * module owning the node's graph). Other opcodes: FX_INVALID_ARGUMENT. */
  FxStatus* (*SupportTargets)(FxOpcode op, const char* const* targets,
                              size_t count, FxSupport** out);
  /* Nodes whose tensor_meta is within `rule`'s limits. */
  FxStatus* (*SupportTensorMeta)(const FxTensorRule* rule, FxSupport** out);
  /* Nodes `fn` accepts. */
  FxStatus* (*SupportCallback)(FxIsNodeSupportedFn fn, void* user_data,
                               FxSupport** out);
  /* Nodes of these opcodes (get_attr, for partitions that read weights). */
  FxStatus* (*SupportOpcodes)(const FxOpcode* ops, size_t count,
                              FxSupport** out);
  /* Nodes with these names. */
  FxStatus* (*SupportNodeNames)(const char* const* names, size_t count,
                                FxSupport** out);
  /* Every rule (torch.fx's chain; true for none) / some rule / not. */
  FxStatus* (*SupportAllOf)(const FxSupport* const* rules, size_t count,
                            FxSupport** out);
  FxStatus* (*SupportAnyOf)(const FxSupport* const* rules, size_t count,
                            FxSupport** out);
  FxStatus* (*SupportNot)(const FxSupport* rule, FxSupport** out);
  void (*ReleaseSupport)(FxSupport* rule);
  FxStatus* (*SupportIsNodeSupported)(const FxSupport* rule, const FxNode* node,
                                      int* out);
  /* torch.fx's CapabilityBasedPartitioner.propose_partitions: partitions in
   * its order, each with its nodes in graph order. `options` may be NULL
   * (torch.fx's defaults). Placeholders and the output never join. */
  FxStatus* (*GraphProposePartitions)(const FxGraph* graph,
                                      const FxSupport* rule,
                                      const FxPartitionOptions* options,
                                      FxPartitions** out);
  size_t (*PartitionsCount)(const FxPartitions* partitions);
  size_t (*PartitionSize)(const FxPartitions* partitions, size_t index);
  /* Node `node_index` of partition `index`, or NULL out of range. */
  FxNode* (*PartitionNode)(const FxPartitions* partitions, size_t index,
                           size_t node_index);
  void (*ReleasePartitions)(FxPartitions* partitions);
  /* torch.fx's fuse_by_partitions: partition k becomes a call_module of a
   * new child GraphModule PREFIX k (`prefix` NULL: "fused_") that shares
   * the attributes its nodes read; the graph is then put in topological
   * order. Needs the graph's owning GraphModule. Checked first (nodes of
   * this graph, no placeholder or output, disjoint, each used outside, no
   * cycle once fused, names free): on failure nothing changes. The
   * partitions' nodes are erased: release or forget `partitions` after. */
  FxStatus* (*GraphFusePartitions)(FxGraph* graph,
                                   const FxPartitions* partitions,
                                   const char* prefix);

  /* Version 4: capture extensions (only inside register_extensions) ------
   * What fx::make_fx (fx_core/capture, ATen-level capture of LibTorch code)
   * does with an ATen operator, for every capture in the process (a
   * capture's own MakeFxOptions take precedence). `op` is "aten::NAME" or
   * "aten::NAME.OVERLOAD" ("aten::silu", "aten::add.Tensor"). Each fails,
   * registering nothing, with FX_NOT_FOUND for an operator LibTorch does not
   * have and FX_FAILED_PRECONDITION for one a plugin registered already.
   *
   * A decomposition (make_fx's decomposition_table): the capture records
   * the calls `replacement` makes in the operator's place. `replacement` is
   * a standalone graph (CreateGraph; copied, the caller keeps it) with one
   * placeholder per argument of the operator's schema, in schema order
   * (defaults filled in), call_function nodes whose targets the runtime
   * calls (torch.ops.aten.NAME.OVERLOAD, operator.getitem, ...) and an
   * output: the result, or a list of as many values as the operator
   * returns. FX_INVALID_ARGUMENT, naming the node, when it does not fit.
   * A replacement that fails while a capture runs it fails the capture with
   * an error naming the plugin and the operator. */
  FxStatus* (*RegisterDecomposition)(FxRegistrar* registrar, const char* op,
                                     const FxGraph* replacement);
  /* A leaf operator: recorded as one node wherever it is called, composite
   * operators included (a vendor's fused kernel stays whole); nothing it
   * calls is recorded. */
  FxStatus* (*RegisterLeafOp)(FxRegistrar* registrar, const char* op);

  /* Version 5: delegation ----------------------------------------------- */
  /* Registers a backend (only inside register_extensions); the info is
   * copied. FX_FAILED_PRECONDITION when the name is taken. */
  FxStatus* (*RegisterBackend)(FxRegistrar* registrar,
                               const FxBackendInfo* backend);
  /* GraphFusePartitions, then each child GraphModule PREFIX k (`prefix`
   * NULL: "<backend>_") is compiled by `backend` and replaced by a delegated
   * module whose call runs the backend. Every partition is fused and
   * compiled before anything changes: an unknown backend (FX_NOT_FOUND), a
   * partition the fusion refuses, an input without tensor_meta or a failed
   * compile (FX_FAILED_PRECONDITION naming the backend and the partition)
   * leaves the graph and its module as they were. A run that fails later
   * throws an error naming the backend and the partition. */
  FxStatus* (*GraphDelegatePartitions)(FxGraph* graph,
                                       const FxPartitions* partitions,
                                       const char* backend, const char* prefix);

  /* Version 6: no entries; FxPassInfo gained `tolerance` and `idempotent`. */

  /* Version 7: operator effects -------------------------------------------
   * What LibTorch's declaration of the ATen operator `node` calls says it
   * does besides computing its result, as FX_EFFECT_* bits: read from the
   * operator's schemas and tags for every target spelling that names one
   * (torch.ops.aten.NAME[.OVERLOAD], torch.NAME, torch.nn.functional.NAME
   * for aten::NAME, Tensor methods); the union over the overloads a
   * spelling names. 0 for a target naming no ATen operator (Python-level
   * functions such as operator.iadd are the caller's to know), for
   * placeholders, get_attr, call_module and output, and for NULL. */
  uint32_t (*NodeOperatorEffects)(const FxNode* node);

  /* Version 8: symbolic shapes --------------------------------------------
   * A symbolic graph (torch 1.13's make_fx(tracing_mode="symbolic")) names
   * sizes instead of fixing them: its placeholders' meta['tensor_meta']
   * holds symbolic ints (`t0.size(0)`, `2*t0.size(0)`), and it runs only on
   * inputs that keep its shape environment: the symbols (one per size that
   * varies, each with its hint, the value it had at capture, torch's
   * var_to_val, and its source, the placeholder and dimension it is read
   * from) and the guards (relations of the symbols the capture's decisions
   * rested on). */
  /* 1 when `arg` is a symbolic int (ArgKind says FX_ARG_STRING for it, and
   * ArgGetString gives its expression as sympy prints it), else 0. */
  int (*ArgIsSymInt)(const FxArg* arg);
  /* A symbolic int from its expression ("2*t0.size(0)", "t0.size(1)//4"),
   * stored as sympy prints it; FX_INVALID_ARGUMENT naming the offset when
   * the text is not an integer expression of symbols. */
  FxStatus* (*CreateSymInt)(const char* expression, FxArg** out);
  /* A snapshot of `graph`'s shape environment, owned by the caller
   * (ReleaseShapeEnv): the sizes its placeholders' tensor_meta declare,
   * with the hints and guards the capture recorded (held by the graph's
   * owning GraphModule; a graph without one has sizes only). *out is NULL
   * when the graph is not symbolic. Later changes to the graph do not
   * change it. FX_FAILED_PRECONDITION naming the placeholder whose
   * tensor_meta holds a malformed size. */
  FxStatus* (*GraphShapeEnv)(const FxGraph* graph, FxShapeEnv** out);
  void (*ReleaseShapeEnv)(FxShapeEnv* env);
  /* The symbols, in the order the placeholders' sizes and strides name
   * them, then those only guards name. */
  size_t (*ShapeEnvNumSymbols)(const FxShapeEnv* env);
  /* Symbol `index`'s name ("t0.size(0)"), or NULL out of range. */
  const char* (*ShapeEnvSymbolName)(const FxShapeEnv* env, size_t index);
  /* Its hint; FX_NOT_FOUND when the capture recorded none. */
  FxStatus* (*ShapeEnvSymbolHint)(const FxShapeEnv* env, size_t index,
                                  int64_t* out);
  /* The first placeholder size (or stride: *is_stride 1) that is the symbol
   * alone: the placeholder's name (borrowed from env) and the dimension.
   * Any of the out-parameters may be NULL. FX_NOT_FOUND when none is. */
  FxStatus* (*ShapeEnvSymbolSource)(const FxShapeEnv* env, size_t index,
                                    const char** placeholder, size_t* dim,
                                    int* is_stride);
  size_t (*ShapeEnvNumGuards)(const FxShapeEnv* env);
  /* Guard `index` as torch 1.13's ShapeEnv.format_guards() prints it
   * (without the leading " - "): the expression the capture evaluated and
   * the value it had, "Not(Eq(t0.size(1), 2))", "t0.size(1)/2 > 1"; the
   * relation's text when the capture recorded no printed form. NULL out of
   * range. */
  const char* (*ShapeEnvGuard)(const FxShapeEnv* env, size_t index);
  /* The relation guard `index` checks, as sympy prints it: what must hold
   * ("Ne(t0.size(1), 2)", "t0.size(1) > 2"; the fx-graph file's
   * shape_env "guards"). NULL out of range. */
  const char* (*ShapeEnvGuardRelation)(const FxShapeEnv* env, size_t index);
  /* Checks the shapes of `inputs`, one per placeholder of the graph in
   * order (as GraphRun takes them; data is not read; NULL for a placeholder
   * that is not a tensor; NULL strides are row-major) against the
   * environment: every symbol's size, the sizes the capture specialised
   * (0 and 1 always), equal sizes where one symbol stands for several, and
   * every guard. FX_INVALID_ARGUMENT with a message naming the placeholder,
   * the dimension and the guard (with its symbols' values) otherwise. */
  FxStatus* (*ShapeEnvCheck)(const FxShapeEnv* env,
                             const DLTensor* const* inputs, size_t num_inputs);
  /* Symbolic shape propagation by the host: every node's
   * meta['tensor_meta'] gets sizes (and strides) as expressions of the
   * placeholders' symbols, symbolic ints meta['val'], as torch 1.13's
   * make_fx(tracing_mode="symbolic") leaves meta['val']; computed from the
   * operators' shape functions (LibTorch's TorchScript shape registry and
   * the host's own), each decision on a symbol kept as a guard.
   * `shapes`: num_shapes == 0 takes a symbolic graph's own placeholder
   * sizes; otherwise one per placeholder, "Bx3x224x224" (each size an
   * integer, a symbol or an expression such as 2*B, separated by 'x'), or
   * NULL / "" for a placeholder whose tensor_meta sizes stay. `hints`:
   * "NAME=VALUE" for symbols (the values the graph is traced with at meta
   * level); a symbol without one (given, or the graph's own) takes 64, 96,
   * 128, ... in the order symbols appear. *guards (may be NULL) receives
   * the guards taken, a list of strings as sympy prints them (the caller's:
   * ReleaseArg). Nothing changes unless it succeeds: FX_INVALID_ARGUMENT
   * naming the placeholder and dimension or the text that is wrong,
   * FX_FAILED_PRECONDITION naming the node without a shape rule (or the
   * graph without an owning GraphModule). */
  FxStatus* (*GraphSymbolicShapeProp)(FxGraph* graph, const char* const* shapes,
                                      size_t num_shapes,
                                      const char* const* hints,
                                      size_t num_hints, FxArg** guards);
  /* Whether the submodule `name` of the graph's owning GraphModule is in
   * training mode (module.training): 1 training, 0 eval, -1 when there is no
   * such module (or no owning GraphModule). A rewrite valid for inference
   * only (folding BatchNorm's running statistics) must not touch a module in
   * training mode, whose forward uses the batch's statistics. */
  int (*GraphModuleTraining)(const FxGraph* graph, const char* name);

  /* Version 9: quantized tensors ------------------------------------------ */
  /* Adds or replaces a quantized tensor attribute (a buffer), as torch's
   * _make_per_tensor_quantized_tensor / _make_per_channel_quantized_tensor
   * make it: `values` holds its integers (int8: qint8, uint8: quint8,
   * int32: qint32; ownership taken in all cases), `scales` (floating point)
   * and `zero_points` (integers) its quantization (read, copied): one of
   * each with axis -1 (per tensor affine), or values->shape[axis] of each
   * (per channel affine along `axis`). FX_INVALID_ARGUMENT naming what is
   * wrong (a scale not positive and finite, a zero point outside the
   * dtype's range, a count or axis that does not fit) and nothing changes.
   * Rolled back with the pass when it fails. */
  FxStatus* (*GraphSetQuantizedAttr)(FxGraph* graph, const char* qualified_name,
                                     DLManagedTensor* values,
                                     const DLTensor* scales,
                                     const DLTensor* zero_points, int64_t axis);

  /* Version 10: several batches of example inputs ------------------------- */
  /* How many batches of example inputs the host holds for this graph: 0
   * (none), 1 (what GraphNumExampleInputs / GraphExampleInput give), or
   * more (`fx run --inputs FILE` whose FILE holds a list of batches, each a
   * list with one input per placeholder: calibration data). */
  size_t (*GraphNumExampleBatches)(const FxGraph* graph);
  /* Input `index` of batch `batch` (a copy the caller calls the deleter
   * of); batch 0 is GraphExampleInput's. FX_NOT_FOUND out of range. */
  FxStatus* (*GraphExampleBatchInput)(const FxGraph* graph, size_t batch,
                                      size_t index, DLManagedTensor** out);

  /* Version 11: renaming -------------------------------------------------- */
  /* Gives nodes[i] the name names[i] for every i < n, all at once: a pass
   * that rebuilds part of a graph keeps the names torch.fx would give (a
   * retrace's, or extract_subgraph's placeholders named after the nodes they
   * stand for). A node may take a name another node of the batch gives up
   * (a swap) or one an erased node had. FX_INVALID_ARGUMENT, naming the
   * entry, and nothing renamed, when a name is not an ASCII Python
   * identifier, is a keyword, a builtin or a global of the generated code
   * (torch, inf, nan, device, ...), or would be another live node's too;
   * or when a node is not a live node of `graph` or comes twice. The names
   * are copied; names read earlier with NodeName stay valid. */
  FxStatus* (*GraphRenameNodes)(FxGraph* graph, size_t n, FxNode* const* nodes,
                                const char* const* names);
  /* From now on `graph` names new nodes as a graph freshly built from its
   * live nodes would: the names of erased nodes, and those given up by
   * GraphRenameNodes, are free again (what torch.fx's Transformer gives, whose
   * retrace builds a new graph). Otherwise, as in torch.fx, a name once
   * handed out is never handed out again. */
  FxStatus* (*GraphResetNamespace)(FxGraph* graph);
  /* The parameters of the submodule at `qualified_name` ("" for the graph's
   * module itself), as torch's named_parameters() lists them: recursively,
   * in registration order, a tensor shared by two paths once (at its
   * first). A dict argument from their qualified names from the graph's
   * module ("layer1.0.conv1.weight") to their shapes (tuples of ints), owned
   * by the caller (ReleaseArg): sizes without reading, or copying for a
   * rollback, any tensor.
   * Needs the graph's owning GraphModule; FX_NOT_FOUND when there is no
   * such submodule. */
  FxStatus* (*GraphModuleParameters)(const FxGraph* graph,
                                     const char* qualified_name, FxArg** out);

  /* Version 12: operator schemas and tensor storage ----------------------- */
  /* The schemas of the ATen operators `target` names, each as torch prints
   * str(op._schema): "aten::add.Tensor(Tensor self, Tensor other, *,
   * Scalar alpha=1) -> Tensor", alias annotations included
   * ("Tensor(a) self", "Tensor(a!) self", "Tensor(a -> *) self").
   * `target` is a node's target as torch.fx spells it, resolved as
   * NodeOperatorEffects resolves it: a call_function target
   * torch.ops.aten.NAME.OVERLOAD names that one overload ("default" the
   * unnamed one); torch.ops.aten.NAME, torch.NAME, torch.nn.functional.NAME
   * and a call_method target NAME (a Tensor method: a target without a dot)
   * name every overload of aten::NAME, in the order
   * torch._C._jit_get_schemas_for_operator("aten::NAME") lists them
   * (TorchScript's overloads and out= variants included).
   * torch.ops.NS.NAME[.OVERLOAD] names NS::NAME's alike, for any namespace
   * LibTorch registers operators in. *out: a list argument of strings, the
   * caller's (ReleaseArg); an empty list when the target names no
   * operator LibTorch has (operator.add, a Python function, an unknown
   * overload). FX_INVALID_ARGUMENT for NULL. */
  FxStatus* (*OperatorSchemas)(const char* target, FxArg** out);
  /* Where a tensor value of a GraphRun keeps its elements: *storage an
   * identity of its storage, nonzero, equal for two values of the same run
   * exactly when they share a storage (a view and its base, an in-place
   * op's result and its input), meta runs included (meta tensors have
   * storages too; in a meta run, a value the host computes without the op's
   * meta kernel, on CPU, has a storage of its own); *offset its
   * storage_offset() in elements. The host keeps every storage it has
   * numbered alive until the run returns, so an identity is never reused
   * within a run. Items of a value (ValueItem) are values of its run. Either
   * out-parameter may be NULL. FX_INVALID_ARGUMENT when the value is not a
   * tensor (or is one without a storage: sparse) or not a value of a run in
   * progress (GraphEvaluate's). */
  FxStatus* (*ValueStorage)(const FxValue* value, uint64_t* storage,
                            int64_t* offset);

  /* Version 13: files a pass writes ---------------------------------------- */
  /* Writes `size` bytes at `data` to the file `path` (a report, a drawing)
   * under the host's one output rule: refused with FX_INVALID_ARGUMENT,
   * naming `path` and the input it would overwrite, when `path` is a file
   * the running host command reads (`fx run`'s graph file, its weights,
   * --inputs, --config: compared as files, so links and other spellings of
   * them are refused too), and left untouched then. Otherwise the host
   * replaces (or creates) it atomically: the bytes go to a fresh temporary
   * in `path`'s directory (O_EXCL | O_NOFOLLOW) that is renamed over it, so
   * a reader sees the old file or the whole new one; a replaced file keeps
   * its permission bits. With no host command (fx_sdk.run_pipeline from
   * Python) nothing is refused. The directory must exist. FX_INVALID_ARGUMENT
   * also for a NULL or empty path, NULL data with a nonzero size, a path
   * that exists and is not a regular file, and a path the host cannot
   * create or replace (no such directory, no permission); FX_INTERNAL when
   * writing the bytes fails (a full disk). No temporary is left behind. */
  FxStatus* (*WriteOutputFile)(const char* path, const void* data, size_t size);

  /* Version 14: Python signatures and annotations ------------------------- */
  /* The Python signature a call binds its arguments to, as
   * inspect.signature(target) has it in torch 1.13, for the calls whose
   * target is a Python function rather than a builtin:
   *  - FX_OP_CALL_FUNCTION: `target` is a node's target
   *    ("torch.nn.functional.relu", "torch.functional.split",
   *    "torch._assert", a function a vendor registered with a signature)
   *    naming a function the host runs from a Python signature. Builtins
   *    (C functions: torch.NAME for an ATen operator aten::NAME,
   *    torch._C.*, torch.ops.*, operator.*, math.*, builtins.*) have no
   *    such signature; their arguments bind to their ATen schemas
   *    (OperatorSchemas);
   *  - FX_OP_CALL_MODULE: `target` is the qualified name of a submodule of
   *    the graph's owning GraphModule; the signature is its class's
   *    `forward`, without `self`, as the host calls it.
   * *out (the caller's, ReleaseArg) is a list with a dict per parameter, in
   * order: {"name": "inplace", "kind": K, "default": False}, K one of
   * inspect's "POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY", "VAR_POSITIONAL",
   * "VAR_KEYWORD"; "default" is absent for a parameter without one.
   * FX_NOT_FOUND when the target is a builtin, names nothing the host
   * knows, or (call_module) no submodule / one whose class the host has no
   * forward signature for; FX_INVALID_ARGUMENT for NULL or another opcode.
   * `graph` may be NULL for FX_OP_CALL_FUNCTION; call_module needs the
   * graph's owning GraphModule (FX_FAILED_PRECONDITION without one). */
  FxStatus* (*TargetSignature)(const FxGraph* graph, FxOpcode op,
                               const char* target, FxArg** out);
  /* The type torch 1.13's AnnotateTypesWithSchema gives a node of opcode
   * `op` and this target, as torch.fx's code spells a type
   * ("torch.Tensor", "typing_Tuple[torch.Tensor,torch.Tensor]"); *out is
   * the caller's (ReleaseString):
   *  - FX_OP_CALL_FUNCTION: a Python function of torch.nn.functional
   *    (torch.nn.functional.relu): its declared return annotation (a
   *    boolean-dispatched one's when both branches declare the same);
   *  - FX_OP_CALL_MODULE: the submodule `target` of the graph's owning
   *    GraphModule, when its class is torch.nn's: its forward's;
   *  - FX_OP_GET_ATTR: the attribute at `target`, as TorchScript infers
   *    its type: "torch.Tensor" for a parameter, buffer or tensor constant.
   * FX_NOT_FOUND when there is none (no annotation or `-> None`, another
   * function or module class, a submodule, no such attribute);
   * FX_INVALID_ARGUMENT for NULL or another opcode. `graph` may be NULL for
   * FX_OP_CALL_FUNCTION; the others need the graph's owning GraphModule
   * (FX_FAILED_PRECONDITION without one). */
  FxStatus* (*TargetReturnType)(const FxGraph* graph, FxOpcode op,
                                const char* target, char** out);

  /* Version 15: printed types and renamed shared attributes --------------- */
  /* Sets the node's type annotation as torch.fx's code spells it (`type`,
   * NULL or "" for none, as NodeSetType) together with how print(graph)
   * shows it, `text`, when that is not what torch.fx derives from the code
   * spelling: a gradual type's repr, "TensorType[(1, 2, Dyn)]", whose code
   * spelling is a list of globals. `text` NULL or "" means derived. `text`
   * is one line of printable ASCII (FX_INVALID_ARGUMENT otherwise) and is
   * kept in graph files (the node's "type_text"). Rolled back with the pass
   * when it fails. */
  FxStatus* (*NodeSetTypeText)(FxNode* node, const char* type,
                               const char* text);
  /* The node's type as print(graph) shows it (the text NodeSetTypeText
   * gave, else the one derived from NodeType), "" for none; *out is the
   * caller's (ReleaseString). */
  FxStatus* (*NodeTypeText)(const FxNode* node, char** out);
  /* GraphShareAttr under another name: makes the submodule, parameter or
   * buffer at `qualified_name` of `graph`'s module an attribute of
   * `subgraph`'s module at `name` (a qualified name of that module; torch's
   * split_module uses "layer1_0_conv" for "layer1.0.conv"), shared rather
   * than copied. FX_FAILED_PRECONDITION when `subgraph`'s module already
   * has an attribute `name` that is a different object; sharing the same
   * object under the same name twice does nothing. FX_NOT_FOUND and
   * FX_INVALID_ARGUMENT as GraphShareAttr. */
  FxStatus* (*GraphShareAttrAs)(FxGraph* graph, FxGraph* subgraph,
                                const char* qualified_name, const char* name);

  /* Version 16: graphs of child GraphModules ------------------------------ */
  /* The graph of the GraphModule at `qualified_name` among the submodules of
   * `graph`'s owning module (a split's submod_0, a split_by_tags component,
   * a module a tracer kept as a GraphModule), as torch.fx's
   * gm.get_submodule(qualified_name).graph. *out is borrowed for the pass,
   * as `graph` is, and asking again gives the same graph. The pass may read
   * and change it: its changes are part of the pass, linted after it, and
   * committed or rolled back with it (from an isolated worker too). The
   * attribute entries on *out see that GraphModule's own attributes:
   * GraphModuleType(*out, "a") is the class of its submodule "a" (the
   * submodule QUALIFIED_NAME.a of `graph`'s module). FX_NOT_FOUND when there
   * is no such submodule; FX_INVALID_ARGUMENT when it is not a GraphModule
   * (the error names its class); FX_FAILED_PRECONDITION when `graph` has no
   * owning GraphModule or is not a pass's graph (no pass runs on it, or it
   * is a partition's or a backend's). While its graph is lent, a module
   * replacing the child (or a module above it) is refused. */
  FxStatus* (*GraphSubmoduleGraph)(FxGraph* graph, const char* qualified_name,
                                   FxGraph** out);

  /* Version 17: the attributes a graph uses ------------------------------- */
  /* torch.fx's GraphModule(gm, gm.graph) in place: the submodules,
   * parameters and buffers of `graph`'s owning GraphModule become those its
   * call_module and get_attr nodes name, installed in the order the graph
   * first names them under new plain containers, as torch.fx's _copy_attr
   * builds them ("layer1.0.conv" alone keeps containers "layer1" and
   * "layer1.0" holding only it); the others are taken out. What is kept is
   * the same objects, and no module kept is changed. This is what the
   * GraphModule torch's extract_subgraph or split_by_tags returns holds.
   * A buffer keeps its kind (non-persistent or a plain attribute). Part of
   * the pass: committed or rolled back with it (from an isolated worker
   * too); GraphModules the pass added before the call (GraphAddSubgraphModule)
   * are kept when the graph calls them. On a lent child graph
   * (GraphSubmoduleGraph) it applies to that child. FX_NOT_FOUND naming the
   * node whose target the module lacks (a call_module target that is no
   * submodule); FX_FAILED_PRECONDITION when `graph` has no owning
   * GraphModule, is neither the pass's graph nor a lent one, or would lose
   * a submodule whose graph is lent to the pass. Nothing changes on an
   * error. */
  FxStatus* (*GraphKeepUsedAttrs)(FxGraph* graph);
};

/* NodeOperatorEffects' bits (version 7). */
/* Tag nondeterministic_seeded: two calls with the same arguments draw
 * different random numbers (rand*, dropout, bernoulli, normal, ...). */
#define FX_EFFECT_NONDETERMINISTIC 1u
/* A positional argument the schema marks as written (in-place ops). */
#define FX_EFFECT_MUTATES 2u

/* The entry point every plugin defines. */
FX_PLUGIN_EXPORT const FxPluginInfo* fx_plugin_get_info(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FX_PLUGIN_API_H_ */
