// Private to the host's implementation of the C ABI (c_api.cc and the files
// that fill the table's parts): argument checks, the lifetime of graphs
// plugins create, and the table's parts. The guard every entry runs in is
// host/handles/guard.h; handles are converted by wrap() / unwrap()
// (host/handles/wrap.h), nowhere else.
#ifndef HOST_CAPI_API_INTERNAL_H_
#define HOST_CAPI_API_INTERNAL_H_

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "fx/plugin_api.h"
#include "fx_core/ir/argument.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "host/capi/c_api.h"
#include "host/handles/attribute_store.h"
#include "host/handles/guard.h"
#include "host/handles/wrap.h"

namespace fx {
class GraphModule;
}  // namespace fx

namespace fx::host::internal {

inline Argument copy_arg(const FxArg* a, const char* what) {
  return *unwrap(require(a, what));
}

// Graphs from CreateGraph, and what ReleaseGraph does with them: a released
// graph stays allocated, marked, until the host frees it between passes
// (free_released_graphs, c_api.h), so that a handle into it is refused with
// a status instead of being read after it was freed.
void note_created_graph(Graph* g);
void release_graph(Graph* g);
bool is_released(const Graph* g);

// The graph an entry works on: not NULL, not released (FX_FAILED_PRECONDITION).
Graph* live_graph(FxGraph* g);
const Graph* live_graph(const FxGraph* g);
// A node an entry changes or links: not NULL, of a graph not released, not
// erased (FX_FAILED_PRECONDITION: an erased node can only be read).
Node* live_node(FxNode* n, const char* what);
const Node* live_node(const FxNode* n, const char* what);

// FxTensorMeta as the host fills it, and into the caller's struct: version-1
// entries write exactly the version-1 fields (kTensorMetaV1Size bytes), the
// version-2 entries the fields that fit in the caller's `struct_size`.
inline constexpr size_t kTensorMetaV1Size = offsetof(FxTensorMeta, struct_size);
void write_tensor_meta(const FxTensorMeta& meta, FxTensorMeta* out,
                       size_t size);
// The size a version-2 caller declares in out->struct_size (checked: at
// least the version-1 fields); the host writes at most sizeof(FxTensorMeta).
size_t declared_tensor_meta_size(const FxTensorMeta* out);

// The GraphModule that owns `g` (submodule_api.cc); fails with
// FX_FAILED_PRECONDITION when there is none.
GraphModule& owning_module(const Graph* g);

// Who registers (extension_api.cc defines FxRegistrar): the plugin's name
// and the table version its functions are handed.
const std::string& registrar_plugin(const FxRegistrar* r);
uint32_t registrar_api_version(const FxRegistrar* r);

// GraphFusePartitions' checks (names PREFIX k free in `gm`, every get_attr
// and call_module target of the partitions' nodes present) and the
// partitions' node lists (partition_api.cc).
std::vector<std::vector<Node*>> checked_partition_lists(
    GraphModule& gm, const FxPartitions* partitions, const std::string& prefix);

// The version-1 table's forwarding of the slots its two releases laid out
// differently (first_release_forwarding.cc): slots 99..105 of `v1` become
// forwarders that send a call whose first argument is a live registrar or
// custom-op call (a live handle of the handle table) to the first release's
// entry there (RegisterCustomOp .. CallFloatArg) and every other call to the
// entry the slot is declared as.
void forward_first_release_slots(FxApi& v1);

// A node's arguments from a C array of FxArg (arg_api.cc): each copied, the
// arrays not NULL when `count` is not 0.
Node::Kwargs make_kwargs(const char* const* keys, const FxArg* const* values,
                         size_t count);
Node::Args make_args(const FxArg* const* args, size_t count);
// The opcode `op` names, FX_INVALID_ARGUMENT for an unknown one.
Opcode to_opcode(FxOpcode op);

// The parts of the table, each in its own file (c_api.cc fills the table).
void fill_status_entries(FxApi& table);          // status_api.cc
void fill_scalar_arg_entries(FxApi& table);      // arg_api.cc
void fill_compound_arg_entries(FxApi& table);    // arg_api.cc
void fill_arg_inspection_entries(FxApi& table);  // arg_api.cc
void fill_node_field_entries(FxApi& table);      // node_api.cc
void fill_node_link_entries(FxApi& table);       // node_api.cc
void fill_node_update_entries(FxApi& table);     // node_api.cc
void fill_node_rewire_entries(FxApi& table);     // node_api.cc
void fill_graph_query_entries(FxApi& table);     // graph_api.cc
void fill_graph_edit_entries(FxApi& table);      // graph_api.cc
void fill_attribute_entries(FxApi& table);       // module_api.cc
void fill_module_entries(FxApi& table);          // module_api.cc
void fill_example_batch_entries(FxApi& table);   // module_api.cc
void fill_option_entries(FxApi& table);          // options_api.cc
void fill_run_entries(FxApi& table);             // run_api.cc
void fill_value_entries(FxApi& table);           // value_api.cc
void fill_submodule_entries(FxApi& table);       // submodule_api.cc
void fill_extension_entries(FxApi& table);       // extension_api.cc
void fill_rewrite_entries(FxApi& table);         // rewrite_api.cc
void fill_partition_entries(FxApi& table);       // partition_api.cc
void fill_delegate_entries(FxApi& table);        // delegate_api.cc
void fill_shape_env_entries(FxApi& table);       // shape_env_api.cc
// symbolic_shape_prop_api.cc
void fill_symbolic_shape_prop_entry(FxApi& table);
void fill_quantized_attr_entry(FxApi& table);  // quantized_attr_api.cc
void fill_rename_entries(FxApi& table);        // rename_api.cc
void fill_schema_entries(FxApi& table);        // schema_api.cc
void fill_output_file_entry(FxApi& table);     // output_file_api.cc

}  // namespace fx::host::internal

#endif  // HOST_CAPI_API_INTERNAL_H_
