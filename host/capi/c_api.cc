// The C function table: make_api fills every entry from the files that
// implement its parts (api_internal.h), api() hands out the table cut down to
// a plugin's version, and handles convert to and from fx_core's objects.
#include "host/capi/c_api.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <new>
#include <vector>

#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "host/capi/api_internal.h"
#include "host/handles/wrap.h"

namespace fx::host {
namespace internal {

// --------------------------------------------------------------- the table

// Fills every entry of version FX_API_VERSION; the parts in the order the
// table has always been filled.
FxApi make_api() {
  FxApi t{};
  t.version = FX_API_VERSION;
  fill_run_entries(t);
  fill_value_entries(t);
  fill_submodule_entries(t);
  fill_extension_entries(t);
  fill_rewrite_entries(t);
  fill_status_entries(t);
  fill_scalar_arg_entries(t);
  fill_compound_arg_entries(t);
  fill_arg_inspection_entries(t);
  fill_node_field_entries(t);
  fill_node_link_entries(t);
  fill_node_update_entries(t);
  fill_node_rewire_entries(t);
  fill_graph_query_entries(t);
  fill_graph_edit_entries(t);
  fill_attribute_entries(t);
  fill_module_entries(t);
  fill_option_entries(t);
  fill_partition_entries(t);
  fill_delegate_entries(t);
  fill_shape_env_entries(t);
  fill_symbolic_shape_prop_entry(t);
  fill_quantized_attr_entry(t);
  fill_example_batch_entries(t);
  fill_rename_entries(t);
  fill_schema_entries(t);
  fill_output_file_entry(t);
  return t;
}

}  // namespace internal

namespace {

// Where the entries of each version end: the offset of the first entry of
// the next version (appended with it), or the table's end.
constexpr size_t entries_end(uint32_t version) {
  switch (version) {
    case 1:
      return offsetof(FxApi, ValueTensorMeta2);
    case 2:
      return offsetof(FxApi, SupportTargets);
    case 3:
      return offsetof(FxApi, RegisterDecomposition);
    case 4:
      return offsetof(FxApi, RegisterBackend);
    case 5:  // version 6 adds no entries: versions 5 and 6 end here
    case 6:
      return offsetof(FxApi, NodeOperatorEffects);
    case 7:
      return offsetof(FxApi, ArgIsSymInt);
    case 8:
      return offsetof(FxApi, GraphSetQuantizedAttr);
    case 9:
      return offsetof(FxApi, GraphNumExampleBatches);
    case 10:
      return offsetof(FxApi, GraphRenameNodes);
    case 11:
      return offsetof(FxApi, OperatorSchemas);
    case 12:
      return offsetof(FxApi, WriteOutputFile);
    case 13:
      return offsetof(FxApi, TargetSignature);
    case 14:
      return offsetof(FxApi, NodeSetTypeText);
    case 15:
      return offsetof(FxApi, GraphSubmoduleGraph);
    case 16:
      return offsetof(FxApi, GraphKeepUsedAttrs);
    default:
      return sizeof(FxApi);
  }
}
static_assert(FX_API_VERSION == 17,
              "a new API version: add where its entries end to entries_end");

// The whole table cut down to `version`: later entries zeroed.
FxApi table_of_version(const FxApi& full, uint32_t version) {
  FxApi t = full;
  t.version = version;
  size_t end = entries_end(version);
  std::memset(reinterpret_cast<char*>(&t) + end, 0, sizeof(FxApi) - end);
  return t;
}

}  // namespace

const FxApi* api(uint32_t version) {
  static const auto* tables = [] {
    const FxApi full = internal::make_api();
    auto* all = new std::vector<FxApi>();
    for (uint32_t v = 1; v <= FX_API_VERSION; ++v) {
      all->push_back(table_of_version(full, v));
    }
    internal::forward_first_release_slots(all->front());
    return all;
  }();
  uint32_t v = std::clamp<uint32_t>(version, 1, FX_API_VERSION);
  return &(*tables)[v - 1];
}

FxGraph* to_handle(Graph* g) { return internal::wrap(g); }
Graph* from_handle(FxGraph* g) { return internal::unwrap(g); }
FxNode* to_handle(Node* n) { return internal::wrap(n); }
Node* from_handle(FxNode* n) { return internal::unwrap(n); }

}  // namespace fx::host
