/* The plugin-facing ABI as one library: an exported function whose
 * parameters reach every struct, enum and function type of
 * fx/plugin_api.h, so `abidw` records them all from its debug info. Built
 * twice (BUILD.bazel): against the current header, and against the frozen
 * version-1 copy, whose record is the checked-in baseline
 * (baseline/abi_v1.xml). abi_baseline_test.sh compares them with
 * `abidiff`. */
#include "fx/plugin_api.h"

FX_PLUGIN_EXPORT void fx_abi_probe(
    const FxApi* api, const FxPluginInfo* plugin, const FxPassInfo* pass,
    const FxOptionSpec* option, const FxNameList* names,
    const FxTensorMeta* meta, const FxTensorSpec* spec, const FxCustomOp* op) {
  (void)api, (void)plugin, (void)pass, (void)option, (void)names, (void)meta,
      (void)spec, (void)op;
}
