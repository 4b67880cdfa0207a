// The FxApi entries of version 11: GraphRenameNodes (a batch of renames,
// applied at once or not at all) and GraphResetNamespace (new nodes named as
// in a graph freshly built from the live nodes). fx::Graph checks the batch;
// this file turns its refusal into FX_INVALID_ARGUMENT.
#include <string_view>
#include <vector>

#include "host/capi/api_internal.h"

namespace fx::host::internal {

void fill_rename_entries(FxApi& t) {
  t.GraphRenameNodes = [](FxGraph* g, size_t n, FxNode* const* nodes,
                          const char* const* names) {
    return guarded("GraphRenameNodes", [&] {
      Graph* graph = live_graph(g);
      if (n > 0) require(nodes, "nodes"), require(names, "names");
      std::vector<Node*> renamed(n);
      std::vector<std::string_view> new_names(n);
      for (size_t i = 0; i < n; ++i) {
        renamed[i] = unwrap(nodes[i]);
        if (renamed[i] == nullptr || names[i] == nullptr) {
          fail(FX_INVALID_ARGUMENT,
               cat("entry ", i, ": the node and the name must not be NULL"));
        }
        new_names[i] = names[i];
      }
      try {
        graph->rename_nodes(renamed, new_names);
      } catch (const FxError& e) {
        fail(FX_INVALID_ARGUMENT, e.what());
      }
    });
  };
  t.GraphResetNamespace = [](FxGraph* g) {
    return guarded("GraphResetNamespace",
                   [&] { live_graph(g)->reset_namespace(); });
  };
}

}  // namespace fx::host::internal
