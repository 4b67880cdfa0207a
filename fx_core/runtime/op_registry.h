// fx::OpRegistry: what call_function and call_method targets mean at run time.
//
// torch.fx calls a node's target, a Python callable, with the node's args and
// kwargs. Here a target is a string ("torch.relu", "operator.add",
// "torch.nn.functional.linear", the method "clamp"), so running a graph needs
// a table from targets to LibTorch kernels. Each entry has
//  - a Python signature ("input, dim=None, keepdim=False, *, dtype=None",
//    "self, *size") used to bind a call's positional and keyword arguments,
//    with Python's rules and messages, into one value per parameter; and
//  - a kernel that receives those values (OpArgs) and returns the result.
// Binding happens once per node when a GraphModule compiles its graph, so
// running a node does no name lookup.
//
// The registry is open: code outside fx_core (plugins' hosts, vendors, tests)
// adds targets with add(). The built-in entries (fx_core/runtime/ops) are the
// Python-level functions (operator.*, builtins.*, math.*,
// torch.nn.functional.*, torch.functional.*, torch.masked.*, ...) and the
// torch.* functions and Tensor methods that need a hand-written kernel (a
// C++ spelling for the code generator, Python semantics ATen's schema lacks);
// resolve() binds every other target naming an ATen operator.
//
// Thread safety: add() and find() may be called from any thread; an OpDef
// found stays valid for the life of the process (a replaced entry is kept).
#ifndef FX_CORE_RUNTIME_OP_REGISTRY_H_
#define FX_CORE_RUNTIME_OP_REGISTRY_H_

#include <ATen/core/ivalue.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "fx_core/ir/node.h"

namespace fx {

// One parameter of a Python signature.
struct OpParam {
  enum class Kind : uint8_t {
    kPositional,     // may be given by position or keyword
    kVarPositional,  // *args: collects the remaining positionals in a tuple
    kKeywordOnly,    // after `*` or `*args`
    kVarKeyword,     // **kwargs: collects the other keywords in a dict
  };
  std::string name;
  Kind kind = Kind::kPositional;
  bool has_default = false;
  c10::IValue default_value;
};

// A parsed Python signature. Defaults are Python literals: None, True,
// False, ints, floats, 'strings', tuples/lists of those, and torch names
// (torch.float32, torch.contiguous_format).
class OpSchema {
 public:
  // Throws FxError naming the signature and the problem.
  static OpSchema parse(std::string_view signature);
  const std::vector<OpParam>& params() const { return params_; }
  const std::string& text() const { return text_; }
  // The parameter's position, or -1.
  int index_of(std::string_view name) const;

 private:
  std::string text_;
  std::vector<OpParam> params_;
};

// Where one parameter's value comes from in a call.
struct ParamSource {
  // kVarKwargs: every keyword no named parameter takes.
  enum class Kind : uint8_t { kArg, kKwarg, kDefault, kVarArgs, kVarKwargs };
  Kind kind = Kind::kDefault;
  uint32_t index = 0;  // arg or kwarg index; first arg for kVarArgs
  uint32_t count = 0;  // number of args for kVarArgs
};

// Binds a call with `num_args` positionals and the given keyword names to
// `schema`, as Python does. On failure returns false and sets *error to
// Python's message ("got an unexpected keyword argument 'foo'").
bool bind_call(const OpSchema& schema, size_t num_args,
               const std::vector<std::string_view>& kwarg_names,
               std::vector<ParamSource>* sources, std::string* error);

// Binds a node's args and kwargs to `schema`: for each parameter, the
// Argument the node passes (var-positional ones collected in a tuple), or
// std::nullopt where the parameter's default applies. Returns false with
// *error set, as bind_call does.
bool bind_node_arguments(const OpSchema& schema, const Node::Args& args,
                         const Node::Kwargs& kwargs,
                         std::vector<std::optional<Argument>>* bound,
                         std::string* error);

// Binds runtime values to `schema`: one value per parameter, defaults filled
// in, var-positional arguments collected in a tuple. Returns false with
// *error set (Python's message) when the call does not bind.
bool bind_values(const OpSchema& schema, std::vector<c10::IValue> args,
                 const std::vector<std::pair<std::string, c10::IValue>>& kwargs,
                 std::vector<c10::IValue>* values, std::string* error);

// The bound values of one call, one per schema parameter, with typed
// accessors that throw FxError naming the parameter on a type mismatch.
class OpArgs {
 public:
  OpArgs(const OpSchema& schema, c10::IValue* values)
      : schema_(&schema), values_(values) {}

  size_t size() const { return schema_->params().size(); }
  const c10::IValue& operator[](size_t i) const { return values_[i]; }
  c10::IValue& operator[](size_t i) { return values_[i]; }
  bool is_none(size_t i) const { return values_[i].isNone(); }

  const at::Tensor& tensor(size_t i) const;
  c10::optional<at::Tensor> optional_tensor(size_t i) const;
  int64_t to_int(size_t i) const;
  c10::optional<int64_t> optional_int(size_t i) const;
  double to_double(size_t i) const;
  c10::optional<double> optional_double(size_t i) const;
  bool to_bool(size_t i) const;
  std::string to_string(size_t i) const;
  // A number or a 0-dim tensor as at::Scalar.
  at::Scalar scalar(size_t i) const;
  c10::optional<at::Scalar> optional_scalar(size_t i) const;
  // An int, or a list/tuple of ints (a single list given to a var-positional
  // parameter is unpacked, as x.view((1, -1)) allows).
  std::vector<int64_t> int_list(size_t i) const;
  c10::optional<std::vector<int64_t>> optional_int_list(size_t i) const;
  std::vector<at::Tensor> tensor_list(size_t i) const;
  c10::optional<c10::ScalarType> optional_dtype(size_t i) const;
  c10::optional<c10::MemoryFormat> optional_memory_format(size_t i) const;

  const std::string& param_name(size_t i) const {
    return schema_->params()[i].name;
  }

 private:
  [[noreturn]] void wrong_type(size_t i, std::string_view wanted) const;
  const OpSchema* schema_;
  c10::IValue* values_;
};

using OpKernel = std::function<c10::IValue(OpArgs&)>;

// One registered target.
struct OpDef {
  Opcode op = Opcode::kCallFunction;  // kCallFunction or kCallMethod
  std::string target;
  OpSchema schema;
  OpKernel kernel;
  // The kernel only reads its arguments: it never moves from or assigns to
  // them. Compiled plans then lend it a value held elsewhere instead of
  // copying it (no reference counting). True for the built-in ops; false for
  // kernels added with add(), which may do anything with their OpArgs.
  bool keeps_args = false;
  // Set for entries whose binding depends on the call (ATen operators): a
  // copy of this entry bound to `node`'s arguments, made once when a plan
  // compiles the node (its kernel then tries only the overloads that can
  // accept the node's call). Throws FxError when none can.
  std::function<std::unique_ptr<OpDef>(const Node& node)> specialize;
  // Set for entries whose signature is `*args, **kwargs` (ATen operators):
  // the kernel taking a call's values as they are, so that call_op need not
  // pack them in a tuple and a dict for `kernel` to unpack again.
  std::function<c10::IValue(
      std::vector<c10::IValue> args,
      const std::vector<std::pair<std::string, c10::IValue>>& kwargs)>
      call_values;
  // How the C++ code generator spells a call, with `{param}` placeholders
  // ("torch::relu({input})", "{self}.view({size})"); empty when the target
  // has no C++ spelling.
  std::string cpp;
};

class OpRegistry {
 public:
  OpRegistry() = default;
  OpRegistry(const OpRegistry&) = delete;
  OpRegistry& operator=(const OpRegistry&) = delete;

  // The process-wide registry, holding the built-in ops.
  static OpRegistry& global();

  // Adds or replaces the entry for (op, target). Throws FxError for a bad
  // signature or an opcode other than call_function / call_method.
  const OpDef& add(Opcode op, std::string_view target,
                   std::string_view signature, OpKernel kernel,
                   std::string_view cpp = {});
  // The entry added for (op, target), or nullptr. Only added entries: what a
  // graph runs is resolve()'s.
  const OpDef* find(Opcode op, std::string_view target) const;
  // What running (op, target) calls: the added entry, else the ATen
  // operator the target names (fx_core/runtime/aten: torch.NAME,
  // torch._C._nn.NAME, torch.ops.aten.NAME.OVERLOAD, Tensor methods), as an
  // entry with signature `*args, **kwargs` whose kernel binds each call to
  // the operator's schemas as Python does. nullptr when neither exists.
  const OpDef* resolve(Opcode op, std::string_view target);
  // The ATen operator entry resolve() would give for (op, target) were no
  // entry added: what runs a call an added entry's narrower signature does
  // not bind (torch.div(x, y, out=None)). nullptr when no operator has the
  // name.
  const OpDef* resolve_aten(Opcode op, std::string_view target);
  // resolve(), or FxError with no_kernel_message().
  const OpDef& get(Opcode op, std::string_view target);
  // Every registered target of `op`, sorted.
  std::vector<std::string> targets(Opcode op) const;

 private:
  mutable std::mutex mutex_;
  absl::flat_hash_map<std::string, OpDef*> functions_;
  absl::flat_hash_map<std::string, OpDef*> methods_;
  // resolve()'s ATen entries, per target (nullptr: no such operator).
  absl::flat_hash_map<std::string, const OpDef*> aten_functions_;
  absl::flat_hash_map<std::string, const OpDef*> aten_methods_;
  std::vector<std::unique_ptr<OpDef>> defs_;
};

// The one message for a target nothing resolves: "no kernel for
// call_function target 'T': register one with fx::OpRegistry::global().add()".
std::string no_kernel_message(Opcode op, std::string_view target);

// Registers the built-in ops (builtin_ops.cc); global() calls it once.
void register_builtin_ops(OpRegistry& registry);

// Runs `def` on runtime values: binds `args` and `kwargs` to its schema
// (Python's rules) and calls its kernel; a call whose keywords a
// hand-written signature lacks goes to the ATen operator of the same name
// when there is one (resolve_aten). Throws FxError naming the target on
// a binding error; kernel errors propagate.
c10::IValue call_op(
    const OpDef& def, std::vector<c10::IValue> args,
    const std::vector<std::pair<std::string, c10::IValue>>& kwargs);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_OP_REGISTRY_H_
