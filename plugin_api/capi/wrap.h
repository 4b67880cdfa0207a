// Handle conversions of the C ABI: the one place where an opaque C handle and
// the fx_core object behind it are cast into one another (the idea of MLIR's
// mlir/CAPI/Wrap.h). One wrap() / unwrap() pair per handle kind:
//
//   C handle  fx_core object  who owns it
//   FxGraph   fx::Graph       the host (a GraphModule's graph, a pass's
//                             graph), or the plugin (CreateGraph/ReleaseGraph)
//   FxNode    fx::Node        its graph
//   FxArg     fx::Argument    the caller when an entry creates one (Create*,
//                             CloneArg, GraphModuleConfig; ReleaseArg);
//                             otherwise the node, match or argument that
//                             holds it, and borrowed
//
// wrap() gives the handle of an object, unwrap() the object of a handle;
// both keep const-ness and map nullptr to nullptr. Neither checks anything:
// a handle is the object's address. Private to plugin_api/capi; host code
// elsewhere converts graphs and nodes with fx::host::to_handle() and
// from_handle() (c_api.h), which call these.
//
// The other handle types need no conversion: the host defines them as the
// structs behind the C names (FxStatus and FxOptions in c_api.h, FxValue in
// runtime_api.cc, FxMatch in rewrite_api.cc, FxRegistrar and FxOpCall in
// extension_api.cc).
#ifndef PLUGIN_API_CAPI_WRAP_H_
#define PLUGIN_API_CAPI_WRAP_H_

#include "fx/plugin_api.h"
#include "fx_core/ir/argument.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"

namespace fx::host::internal {

// FxGraph <-> fx::Graph
inline FxGraph* wrap(Graph* g) { return reinterpret_cast<FxGraph*>(g); }
inline const FxGraph* wrap(const Graph* g) {
  return reinterpret_cast<const FxGraph*>(g);
}
inline Graph* unwrap(FxGraph* g) { return reinterpret_cast<Graph*>(g); }
inline const Graph* unwrap(const FxGraph* g) {
  return reinterpret_cast<const Graph*>(g);
}

// FxNode <-> fx::Node
inline FxNode* wrap(Node* n) { return reinterpret_cast<FxNode*>(n); }
inline const FxNode* wrap(const Node* n) {
  return reinterpret_cast<const FxNode*>(n);
}
inline Node* unwrap(FxNode* n) { return reinterpret_cast<Node*>(n); }
inline const Node* unwrap(const FxNode* n) {
  return reinterpret_cast<const Node*>(n);
}

// FxArg <-> fx::Argument
inline FxArg* wrap(Argument* a) { return reinterpret_cast<FxArg*>(a); }
inline const FxArg* wrap(const Argument* a) {
  return reinterpret_cast<const FxArg*>(a);
}
inline Argument* unwrap(FxArg* a) { return reinterpret_cast<Argument*>(a); }
inline const Argument* unwrap(const FxArg* a) {
  return reinterpret_cast<const Argument*>(a);
}

}  // namespace fx::host::internal

#endif  // PLUGIN_API_CAPI_WRAP_H_
