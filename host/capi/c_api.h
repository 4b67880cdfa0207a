// The host side of the C ABI: the FxApi table implemented over fx_core.
//
// Handles name fx_core objects (an FxGraph an fx::Graph, an FxNode an
// fx::Node, an FxArg an fx::Argument) through the handle table: checked
// values, not addresses (converted only by wrap.h, and by to_handle /
// from_handle and LentOptions below for host code). Every entry catches C++
// exceptions and returns them as FxStatus objects; nothing but C leaves the
// table.
//
// Attributes (GraphHasAttr/GetAttr/SetAttr/ModuleType) are answered by the
// AttributeStore bound to the graph for the duration of a pass (a GraphModule
// in practice); without one those calls fail with FX_FAILED_PRECONDITION.
#ifndef HOST_CAPI_C_API_H_
#define HOST_CAPI_C_API_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fx/plugin_api.h"
#include "fx_core/ir/argument.h"
#include "fx_core/support/strings.h"

namespace at {
class Tensor;
}  // namespace at

namespace fx {
class Graph;
class GraphModule;
class Node;
}  // namespace fx

namespace fx::host {

// The table handed to a plugin built against API `version`: version
// min(version, FX_API_VERSION), with the entries of later versions NULL, so
// a plugin sees no table newer than it asked for (plugin_api.h,
// "Negotiation"). The default is this host's whole table. Versions below 1
// get version 1.
const FxApi* api(uint32_t version = FX_API_VERSION);

// Host code outside host/capi (the pass manager, tools, tests) hands
// graphs and nodes to the table through these; they never fail, and map
// nullptr to nullptr.
FxGraph* to_handle(Graph* g);
Graph* from_handle(FxGraph* g);
FxNode* to_handle(Node* n);
Node* from_handle(FxNode* n);

// Lends `options` to one pass call: handle() is what the pass is given, a
// checked handle (wrap.h) that turns stale when this is destroyed, so a
// plugin that keeps it past its pass is refused, never shown freed memory.
// `options` must outlive this.
class LentOptions {
 public:
  explicit LentOptions(const FxOptions& options);
  ~LentOptions();
  LentOptions(const LentOptions&) = delete;
  LentOptions& operator=(const LentOptions&) = delete;
  const FxOptions* handle() const { return handle_; }

 private:
  struct Lent;  // the object the handle names, and its scope (options_api.cc)
  std::unique_ptr<Lent> lent_;
  const FxOptions* handle_;
};

// Frees the graphs plugins released with ReleaseGraph since the last call.
// Until then a released graph is kept, marked, so every entry refuses it
// (and its nodes) with a status. The pass manager calls this after each
// pass; call it only when no plugin code runs.
void free_released_graphs();

// Tensor attributes of the module that owns a graph.
class AttributeStore {
 public:
  virtual ~AttributeStore() = default;
  virtual bool has_attr(std::string_view qualified_name) const = 0;
  // A DLPack view (shares memory); nullptr with *error set when missing.
  virtual DLManagedTensor* get_attr(std::string_view qualified_name,
                                    std::string* error) const = 0;
  // Adds or replaces a tensor attribute; takes ownership of `tensor` in all
  // cases (calls its deleter on failure). Returns false with *error set.
  virtual bool set_attr(std::string_view qualified_name,
                        DLManagedTensor* tensor, std::string* error) = 0;
  // Adds or replaces a tensor attribute with a host tensor (a quantized
  // one, which DLPack cannot carry); false with *error set.
  virtual bool set_tensor_attr(std::string_view qualified_name,
                               const at::Tensor& tensor, std::string* error) {
    (void)qualified_name, (void)tensor;
    *error = "tensors cannot be set on this graph's owner";
    return false;
  }
  // "torch.nn.Linear" for the module at `qualified_name`; false if none.
  virtual bool module_type(std::string_view qualified_name, std::string* type,
                           std::string* error) const = 0;
  // Adds or replaces the submodule at `qualified_name` with a new module of
  // `type` built from `config`; false with *error set.
  virtual bool add_module(std::string_view qualified_name,
                          std::string_view type, const ArgumentDict& config,
                          std::string* error) {
    (void)qualified_name, (void)type, (void)config;
    *error = "modules cannot be added to this graph's owner";
    return false;
  }
  // Example inputs given for the graph (none by default): a DLPack view of
  // input `index`, or nullptr with *error set.
  virtual size_t num_example_inputs() const { return 0; }
  virtual DLManagedTensor* example_input(size_t index,
                                         std::string* error) const {
    *error = "no example inputs were given for this graph";
    (void)index;
    return nullptr;
  }
  // Batches of example inputs (batch 0 is example_input's): by default the
  // one batch example_input gives, if any.
  virtual size_t num_example_batches() const {
    return num_example_inputs() > 0 ? 1 : 0;
  }
  virtual DLManagedTensor* example_batch_input(size_t batch, size_t index,
                                               std::string* error) const {
    if (batch == 0) return example_input(index, error);
    *error = cat("there is ", num_example_batches(),
                 " batch of example inputs, no batch ", batch);
    return nullptr;
  }
};

// An AttributeStore over a GraphModule's tensors and submodules; `owner`
// names it in errors ("the partition has no submodule 'x'").
class GraphModuleAttributeStore : public AttributeStore {
 public:
  GraphModuleAttributeStore(const GraphModule& module, std::string owner)
      : graph_module_(module), owner_(std::move(owner)) {}

  bool has_attr(std::string_view qualified_name) const override;
  bool module_type(std::string_view qualified_name, std::string* type,
                   std::string* error) const override;

 protected:
  // The tensor at `qualified_name`, or an undefined one with *error set.
  at::Tensor tensor_attr(std::string_view qualified_name,
                         std::string* error) const;

 private:
  const GraphModule& graph_module_;
  std::string owner_;
};

// Binds `store` to `graph` while in scope (nesting restores the previous).
class ScopedAttributeStore {
 public:
  ScopedAttributeStore(const Graph* graph, AttributeStore* store);
  ~ScopedAttributeStore();
  ScopedAttributeStore(const ScopedAttributeStore&) = delete;
  ScopedAttributeStore& operator=(const ScopedAttributeStore&) = delete;

 private:
  const Graph* graph_;
  AttributeStore* previous_;
};

// Typed values of a pass's options, as the pass manager parsed them.
struct OptionValue {
  FxOptionType type = FX_OPTION_STRING;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<std::string> list;
};

// What a status says.
struct StatusText {
  FxStatusCode code = FX_OK;
  std::string message;
};

// Reads and frees a status (a checked handle, wrap.h) that an entry or a
// plugin's function returned: NULL reads as FX_OK; a handle that names no
// live status (released already, or not made by this host) as FX_INTERNAL,
// saying so, and nothing is freed.
StatusText take_status(FxStatus* status);

}  // namespace fx::host

// The host's definition of the opaque option set handed to a pass.
struct FxOptions {
  std::vector<std::pair<std::string, fx::host::OptionValue>> values;
};

#endif  // HOST_CAPI_C_API_H_
