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
// in practice; host/handles/attribute_store.h); without one those calls fail
// with FX_FAILED_PRECONDITION. Statuses are read with take_status
// (host/handles/status.h).
#ifndef HOST_CAPI_C_API_H_
#define HOST_CAPI_C_API_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fx/plugin_api.h"
#include "host/handles/attribute_store.h"
#include "host/handles/status.h"

namespace fx {
class Graph;
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

// Typed values of a pass's options, as the pass manager parsed them.
struct OptionValue {
  FxOptionType type = FX_OPTION_STRING;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<std::string> list;
};

}  // namespace fx::host

// The host's definition of the opaque option set handed to a pass.
struct FxOptions {
  std::vector<std::pair<std::string, fx::host::OptionValue>> values;
};

#endif  // HOST_CAPI_C_API_H_
