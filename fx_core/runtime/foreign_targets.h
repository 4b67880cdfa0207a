// fx::ForeignTargets: call_function and call_method targets that one
// GraphModule runs and no registry knows, and the attributes its get_attr
// nodes read that are neither submodules nor tensors.
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
// Attributes: a get_attr node may read an object that is no parameter,
// buffer or submodule the SDK holds (a Python object: a ParameterList
// const folding made, a submodule handed to a wrapped function, an
// instance of a torch.fx.ProxyableClassMeta class, a ScriptModule's `_c`).
// The overlay holds each by its qualified path, as the value the get_attr
// node gives (any c10::IValue; the Python binding's capsule for a Python
// object) with an opaque handle on the object, an origin tag and a
// description for messages. The compiled plans and the Interpreter read a
// get_attr target here when the module has no tensor there; lint and
// GraphModule::resolve_attr see it as AttrKind::kOther; file writers refuse
// it naming the attribute (a file cannot hold such an object).
//
// Copying a ForeignTargets is cheap and shares the entries, which are
// immutable once added (deepcopy() copies the attributes that can be). Reading
// one from several threads is safe; adding is not synchronised (build it before
// handing it to a GraphModule).
#ifndef FX_CORE_RUNTIME_FOREIGN_TARGETS_H_
#define FX_CORE_RUNTIME_FOREIGN_TARGETS_H_

#include <ATen/core/ivalue.h>

#include <functional>
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

// One attribute that is neither a submodule nor a tensor.
struct ForeignAttribute {
  std::string path;              // the get_attr target ("_FX_CONST..", "s._c")
  c10::IValue value;             // what a get_attr node of `path` gives
  std::shared_ptr<void> handle;  // the origin's object; opaque here
  std::string origin;            // who made the entry ("python")
  std::string description;       // what the object is, for messages
  // An independent copy of the entry (GraphModule::deepcopy); empty: the
  // copy shares this one.
  std::function<ForeignAttribute(const ForeignAttribute&)> copy;
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

  // Adds the attribute `attribute.path`. Adding a path already present
  // with the same handle is a no-op returning the entry; with another
  // handle it throws FxError naming the path. Throws FxError for an empty
  // or malformed path (not dotted names).
  const ForeignAttribute& add_attribute(ForeignAttribute attribute);
  // The attribute at `path`, or nullptr.
  const ForeignAttribute* find_attribute(std::string_view path) const;
  // True when an attribute is at `path` or inside it (`path` is "s" and an
  // attribute is "s._c"): what lint sees of the path.
  bool has_attribute_within(std::string_view path) const;
  // Every attribute, by path.
  std::vector<const ForeignAttribute*> attributes() const;

  // Adds `other`'s entries and attributes for keys this overlay lacks.
  void merge(const ForeignTargets& other);
  // A copy whose attributes with a `copy` are copies (GraphModule's
  // deepcopy); targets are shared. Errors of a copy propagate.
  ForeignTargets deepcopy() const;
  // No target and no attribute.
  bool empty() const { return entries_.empty() && attributes_.empty(); }
  // The number of targets (attributes not counted).
  size_t size() const { return entries_.size(); }
  // Every entry, by opcode and target.
  std::vector<const ForeignTarget*> entries() const;

 private:
  static std::string key(Opcode op, std::string_view target);
  std::map<std::string, std::shared_ptr<const ForeignTarget>, std::less<>>
      entries_;
  std::map<std::string, std::shared_ptr<const ForeignAttribute>, std::less<>>
      attributes_;
};

// `foreign`'s resolve(), or OpRegistry::global()'s when `foreign` is null.
const OpDef* resolve_target(const ForeignTargets* foreign, Opcode op,
                            std::string_view target);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_FOREIGN_TARGETS_H_
