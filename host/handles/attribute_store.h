// The tensors and submodules of the module that owns a graph, as the C ABI's
// attribute entries (GraphHasAttr, GraphGetAttr, GraphSetAttr,
// GraphModuleType, GraphExampleInput, ...) see them: an AttributeStore bound
// to the graph while a pass or a backend works on it (ScopedAttributeStore).
#ifndef HOST_HANDLES_ATTRIBUTE_STORE_H_
#define HOST_HANDLES_ATTRIBUTE_STORE_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "fx/plugin_api.h"
#include "fx_core/ir/argument.h"
#include "fx_core/support/strings.h"

namespace at {
class Tensor;
}  // namespace at

namespace fx {
class Graph;
class GraphModule;
}  // namespace fx

namespace fx::host {

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
  // The graph of the child GraphModule `child`, the submodule at
  // `qualified_name`, lent to the running pass (GraphSubmoduleGraph): the
  // store notes it so its changes are committed or rolled back with the
  // pass, and binds a store to it through which the child's own attributes
  // are this store's under `qualified_name.`. The same graph each time in
  // a pass. nullptr with *error set when this owner runs no pass.
  virtual Graph* lend_child_graph(std::string_view qualified_name,
                                  const std::shared_ptr<GraphModule>& child,
                                  std::string* error) {
    (void)qualified_name, (void)child;
    *error =
        "this graph's owner cannot lend child graphs (only a pass's target "
        "can)";
    return nullptr;
  }
  // torch.fx's GraphModule(module, graph) in place for the GraphModule at
  // `module_path` below this store's module ("" for that module itself),
  // `graph` being its graph: its attributes become those the graph uses
  // (GraphModule::keep_used_attributes), committed or rolled back with the
  // pass. False with *error set (a target the module lacks, an owner that
  // runs no pass).
  virtual bool keep_used_attributes(std::string_view module_path,
                                    const Graph& graph, std::string* error) {
    (void)module_path, (void)graph;
    *error =
        "no pass runs on this graph, so its module's attributes cannot change";
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

namespace internal {

// The attribute store bound to `g` (ScopedAttributeStore), or nullptr.
AttributeStore* store_for(const Graph* g);
// The same, failing with FX_FAILED_PRECONDITION (guard.h) when there is none.
AttributeStore* require_store(const Graph* g);

}  // namespace internal
}  // namespace fx::host

#endif  // HOST_HANDLES_ATTRIBUTE_STORE_H_
