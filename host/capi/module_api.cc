// The owning module's entries of the C function table: attributes
// (GraphHasAttr .. GraphModuleType), submodules and example inputs
// (GraphNodeCopy .. GraphExampleInput), example batches (version 10).
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <vector>

#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "host/capi/api_internal.h"
#include "host/capi/c_api.h"
#include "host/handles/attribute_store.h"
#include "host/handles/wrap.h"

namespace fx::host::internal {

namespace {

// -------------------------------------------------- the owning module

// GraphSetAttr takes ownership of `tensor` in all cases.
void set_attr(FxGraph* g, const char* name, DLManagedTensor* tensor) {
  if (g == nullptr || name == nullptr || tensor == nullptr) {
    if (tensor && tensor->deleter) tensor->deleter(tensor);
    fail(FX_INVALID_ARGUMENT, "graph, name and tensor must not be NULL");
  }
  const Graph* graph = nullptr;
  try {
    graph = live_graph(g);
  } catch (...) {
    if (tensor->deleter) tensor->deleter(tensor);
    throw;
  }
  AttributeStore* s = store_for(graph);
  if (s == nullptr) {
    if (tensor->deleter) tensor->deleter(tensor);
    require_store(graph);
  }
  std::string error;
  if (!s->set_attr(name, tensor, &error)) fail(FX_INVALID_ARGUMENT, error);
}

}  // namespace

// GraphHasAttr .. GraphModuleType.
void fill_attribute_entries(FxApi& t) {
  t.GraphHasAttr = [](const FxGraph* g, const char* name) -> int {
    if (name == nullptr || peek(g) == nullptr) return 0;
    AttributeStore* s = store_for(peek(g));
    return s != nullptr && s->has_attr(name);
  };
  t.GraphGetAttr = [](const FxGraph* g, const char* name,
                      DLManagedTensor** out) {
    return guarded("GraphGetAttr", [&] {
      require(out, "out");
      std::string error;
      DLManagedTensor* tensor =
          require_store(live_graph(g))->get_attr(require(name, "name"), &error);
      if (tensor == nullptr) fail(FX_NOT_FOUND, error);
      *out = tensor;
    });
  };
  t.GraphSetAttr = [](FxGraph* g, const char* name, DLManagedTensor* tensor) {
    return guarded("GraphSetAttr", [&] { set_attr(g, name, tensor); });
  };
  t.GraphModuleType = [](const FxGraph* g, const char* name, char** out) {
    return guarded("GraphModuleType", [&] {
      require(out, "out");
      std::string type, error;
      if (!require_store(live_graph(g))
               ->module_type(require(name, "name"), &type, &error)) {
        fail(FX_NOT_FOUND, error);
      }
      *out = c_string(type);
    });
  };
}

namespace {

void add_module(FxGraph* g, const char* name, const char* type,
                const FxArg* config) {
  AttributeStore* s = require_store(live_graph(g));
  const Argument& c = *unwrap(require(config, "config"));
  if (!c.is_dict()) fail(FX_INVALID_ARGUMENT, "config must be a dict");
  std::string error;
  if (!s->add_module(require(name, "qualified_name"),
                     require(type, "module_type"), c.items(), &error)) {
    fail(FX_INVALID_ARGUMENT, error);
  }
}

}  // namespace

// GraphNodeCopy .. GraphExampleInput.
void fill_module_entries(FxApi& t) {
  t.GraphNodeCopy = [](FxGraph* g, const FxNode* n, FxNode** out) {
    return guarded("GraphNodeCopy", [&] {
      require(out, "out");
      *out = wrap(live_graph(g)->node_copy(live_node(n, "node")));
    });
  };
  t.GraphAddModule = [](FxGraph* g, const char* name, const char* type,
                        const FxArg* config) {
    return guarded("GraphAddModule",
                   [&] { add_module(g, name, type, config); });
  };
  t.GraphNumExampleInputs = [](const FxGraph* g) -> size_t {
    if (peek(g) == nullptr) return 0;
    AttributeStore* s = store_for(peek(g));
    return s ? s->num_example_inputs() : 0;
  };
  t.GraphExampleInput = [](const FxGraph* g, size_t index,
                           DLManagedTensor** out) {
    return guarded("GraphExampleInput", [&] {
      require(out, "out");
      std::string error;
      DLManagedTensor* tensor =
          require_store(live_graph(g))->example_input(index, &error);
      if (tensor == nullptr) fail(FX_NOT_FOUND, error);
      *out = tensor;
    });
  };
}

// GraphNumExampleBatches, GraphExampleBatchInput (version 10).
void fill_example_batch_entries(FxApi& t) {
  t.GraphNumExampleBatches = [](const FxGraph* g) -> size_t {
    if (peek(g) == nullptr) return 0;
    AttributeStore* s = store_for(peek(g));
    return s ? s->num_example_batches() : 0;
  };
  t.GraphExampleBatchInput = [](const FxGraph* g, size_t batch, size_t index,
                                DLManagedTensor** out) {
    return guarded("GraphExampleBatchInput", [&] {
      require(out, "out");
      std::string error;
      DLManagedTensor* tensor = require_store(live_graph(g))
                                    ->example_batch_input(batch, index, &error);
      if (tensor == nullptr) fail(FX_NOT_FOUND, error);
      *out = tensor;
    });
  };
}

}  // namespace fx::host::internal
