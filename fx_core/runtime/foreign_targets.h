// fx::ForeignTargets: call_function and call_method targets that one
// GraphModule runs and no registry knows.
//
// The OpRegistry is process-wide and keyed by a target's name. A graph that
// comes from a host language (the Python binding: a user's function, a
// torch.fx.wrap'ed helper, a lambda) may call something that has a name but
// no kernel, and two graphs may call different objects that print the same
// name (two local functions `f`, two lambdas). Registering such a target
// globally would make one graph silently run the other's. Instead each
// GraphModule holds its own overlay: entries keyed by opcode and target
// string, each an OpDef (signature and kernel) plus an opaque handle on the
// object it stands for and an origin tag saying who made it ("python"), so
// the code that made the entry can get its object back. fx_core never looks
// inside a handle.
//
// Where a GraphModule's graph is compiled, interpreted or checked
// (GraphModule::recompile, has_function, Interpreter, InferencePlan), the
// overlay is consulted before OpRegistry::global(). A GraphModule keeps its
// overlay when its graph is replaced (set_graph, a pipeline's rollback),
// copies it in deepcopy() and passes it to GraphModules built from it as a
// root. Files cannot hold a foreign target: writing a graph that calls one
// fails naming it (graph_module_file.h).
//
// Copying a ForeignTargets is cheap and shares the entries, which are
// immutable once added. Reading one from several threads is safe; adding
// is not synchronised (build it before handing it to a GraphModule).
#ifndef FX_CORE_RUNTIME_FOREIGN_TARGETS_H_
#define FX_CORE_RUNTIME_FOREIGN_TARGETS_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fx_core/ir/node.h"
#include "fx_core/runtime/op_registry.h"

namespace fx {

// One target: what running it calls, and the object it stands for.
struct ForeignTarget {
  OpDef def;  // def.op and def.target are the node's opcode and target
  std::shared_ptr<void> handle;  // the origin's object; opaque here
  std::string origin;            // who made the entry ("python")
};

class ForeignTargets {
 public:
  // Adds the target (op, target) with a Python `signature` (as
  // OpRegistry::add takes it) and `kernel`. Adding a target already present
  // with the same handle is a no-op returning the entry; with another
  // handle it throws FxError naming the target (two objects, one name).
  // Throws FxError for a bad signature or an opcode other than call_function
  // / call_method.
  const ForeignTarget& add(Opcode op, std::string_view target,
                           std::string_view signature, OpKernel kernel,
                           std::shared_ptr<void> handle, std::string origin);

  // The entry for (op, target), or nullptr.
  const ForeignTarget* find(Opcode op, std::string_view target) const;
  // What running (op, target) calls: this overlay's entry, else
  // OpRegistry::global().resolve(op, target); nullptr when neither has it.
  const OpDef* resolve(Opcode op, std::string_view target) const;
  // resolve(), or FxError with no_kernel_message().
  const OpDef& get(Opcode op, std::string_view target) const;

  // Adds `other`'s entries for targets this overlay lacks.
  void merge(const ForeignTargets& other);
  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  // Every entry, by opcode and target.
  std::vector<const ForeignTarget*> entries() const;

 private:
  static std::string key(Opcode op, std::string_view target);
  std::map<std::string, std::shared_ptr<const ForeignTarget>, std::less<>>
      entries_;
};

// `foreign`'s resolve(), or OpRegistry::global()'s when `foreign` is null.
const OpDef* resolve_target(const ForeignTargets* foreign, Opcode op,
                            std::string_view target);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_FOREIGN_TARGETS_H_
