#include "host/handles/attribute_store.h"

#include <ATen/core/Tensor.h>

#include <memory>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "host/handles/guard.h"

namespace fx::host {
namespace internal {
namespace {

std::mutex& stores_mutex() {
  static std::mutex m;
  return m;
}

absl::flat_hash_map<const Graph*, AttributeStore*>& stores() {
  static auto* map = new absl::flat_hash_map<const Graph*, AttributeStore*>();
  return *map;
}

}  // namespace

AttributeStore* store_for(const Graph* g) {
  std::lock_guard<std::mutex> lock(stores_mutex());
  auto it = stores().find(g);
  return it == stores().end() ? nullptr : it->second;
}

AttributeStore* require_store(const Graph* g) {
  AttributeStore* s = store_for(g);
  if (s == nullptr) {
    fail(FX_FAILED_PRECONDITION,
         "this graph has no owning module, so it has no attributes");
  }
  return s;
}

}  // namespace internal

using internal::stores;
using internal::stores_mutex;

ScopedAttributeStore::ScopedAttributeStore(const Graph* graph,
                                           AttributeStore* store)
    : graph_(graph) {
  std::lock_guard<std::mutex> lock(stores_mutex());
  auto it = stores().find(graph);
  previous_ = it == stores().end() ? nullptr : it->second;
  if (store) {
    stores()[graph] = store;
  } else {
    stores().erase(graph);
  }
}

ScopedAttributeStore::~ScopedAttributeStore() {
  std::lock_guard<std::mutex> lock(stores_mutex());
  if (previous_) {
    stores()[graph_] = previous_;
  } else {
    stores().erase(graph_);
  }
}

bool GraphModuleAttributeStore::has_attr(std::string_view name) const {
  return graph_module_.get_attr(name).defined() ||
         graph_module_.get_submodule(name) != nullptr;
}

bool GraphModuleAttributeStore::module_type(std::string_view name,
                                            std::string* type,
                                            std::string* error) const {
  std::shared_ptr<torch::nn::Module> m = graph_module_.get_submodule(name);
  if (m == nullptr) {
    *error = cat(owner_, " has no submodule '", name, "'");
    return false;
  }
  *type = module_type_name(*m);
  return true;
}

at::Tensor GraphModuleAttributeStore::tensor_attr(std::string_view name,
                                                  std::string* error) const {
  at::Tensor t = graph_module_.get_attr(name);
  if (!t.defined()) {
    *error = cat(owner_, " has no parameter or buffer '", name, "'");
  }
  return t;
}

}  // namespace fx::host
