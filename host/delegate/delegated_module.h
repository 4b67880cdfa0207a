// fx::host::DelegatedModule: a partition handed to a vendor backend
// (FxBackendInfo, C ABI version 5), as the call_module target that replaces
// the partition. Made once per partition (GraphDelegatePartitions): the
// constructor calls the backend's `compile` with the partition's graph, and
// every call runs the backend's `run` on the compiled object; the destructor
// calls its `release`. The partition's GraphModule stays a child
// ("partition") so its graph and weights live as long as the compiled object
// the backend may have built from them; the backend reads them through the
// partition graph's handle (GraphGetAttr, GraphModuleType, GraphModuleConfig;
// GraphSetAttr is refused).
#ifndef HOST_DELEGATE_DELEGATED_MODULE_H_
#define HOST_DELEGATE_DELEGATED_MODULE_H_

#include <ATen/core/ivalue.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fx/plugin_api.h"
#include "fx_core/runtime/graph_module.h"
#include "host/handles/attribute_store.h"

namespace fx::host {

// A registered backend: the plugin's callbacks and who registered them.
struct Backend {
  std::string name;
  std::string plugin;
  uint32_t api_version = 0;      // of the table its callbacks are handed
  const FxApi* table = nullptr;  // that table (host/capi's api(api_version))
  FxBackendInfo info{};
};

class DelegatedModule : public torch::nn::Module {
 public:
  // Compiles `partition` (named `name`, its call_module target) with
  // `backend`. Throws FxError naming the backend and the partition when an
  // input has no tensor_meta or the backend refuses it.
  DelegatedModule(std::shared_ptr<const Backend> backend, std::string name,
                  std::shared_ptr<GraphModule> partition);
  ~DelegatedModule() override;
  DelegatedModule(const DelegatedModule&) = delete;
  DelegatedModule& operator=(const DelegatedModule&) = delete;

  // Runs the compiled partition: tensors in, a tensor or a tuple of them
  // out, as the partition's graph returns. Throws FxError naming the backend
  // and the partition when the backend fails.
  c10::IValue forward(const std::vector<c10::IValue>& inputs);

  const std::string& backend_name() const { return backend_->name; }
  const GraphModule& partition() const { return *partition_; }

 private:
  std::string where() const;

  std::shared_ptr<const Backend> backend_;
  std::string name_;
  std::shared_ptr<GraphModule> partition_;
  // The partition's weights and modules for the backend (read only), bound
  // to its graph while this module lives.
  std::unique_ptr<AttributeStore> attributes_;
  std::unique_ptr<ScopedAttributeStore> bound_;
  size_t num_outputs_ = 1;
  bool returns_tuple_ = false;
  void* compiled_ = nullptr;
};

// Registers the module kind that lets call_module nodes run delegated
// modules ("fx.host.DelegatedModule", forward(*args)). Idempotent.
void register_delegated_module_kind();

}  // namespace fx::host

#endif  // HOST_DELEGATE_DELEGATED_MODULE_H_
