// fx::AtenOp: an ATen operator's overloads, called the way Python calls them.
//
// find() reads the overloads from LibTorch's operator registry (every
// schema and boxed kernel LibTorch has, nothing retyped here), drops those a
// graph cannot call (out= variants, TorchScript-only ones with list-generic
// or Any types), and orders the rest as torch's Python bindings try them
// (gen_python_functions.py's sort_overloads: Tensor before Scalar, int[]
// before Tensor[], names last, ...). call() then binds a call as
// python_arg_parser.cpp does: overloads in that order, positional and keyword
// arguments by the schema's names (Python's `input` for a function's `self`),
// defaults from the schema, `view(2, 3)` for a lone int[] parameter; the
// first overload that accepts the call runs its boxed kernel. A second pass
// accepts numbers for Tensor parameters (Python's `torch.add(x, 2)`).
//
// Results: one return as itself, several as a tuple (a named tuple
// torch.return_types.NAME when the schema names every return and the target
// is not a torch.ops.aten spelling, as in Python), none as None.
// Errors: FxError with Python's TypeError text ("std() received an invalid
// combination of arguments - got (...), but expected one of: ..."); kernel
// errors propagate (c10::Error).
// Threads: find() is safe from any thread and caches per target for the
// life of the process; an AtenOp is immutable.
#ifndef FX_CORE_RUNTIME_ATEN_ATEN_OP_H_
#define FX_CORE_RUNTIME_ATEN_ATEN_OP_H_

#include <ATen/core/ivalue.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/ir/node.h"
#include "fx_core/runtime/aten/aten_argument.h"
#include "fx_core/runtime/aten/aten_target.h"

namespace torch::jit {
struct Operator;
}  // namespace torch::jit

namespace fx {

class AtenOp {
 public:
  using Kwargs = std::vector<std::pair<std::string, c10::IValue>>;

  // One callable overload.
  struct Overload {
    std::shared_ptr<torch::jit::Operator> op;
    std::string overload_name;
    std::vector<AtenParam> params;  // schema order
    // The params positional arguments fill, in order: those that are not
    // keyword-only, a method's `self` first wherever the schema has it
    // (polygamma(int n, Tensor self) is x.polygamma(n)).
    std::vector<size_t> positional;
    bool varargs_int_list = false;  // view(2, 3): ints gathered into int[]
    size_t num_returns = 0;
    bool returns_tensor_list = false;  // Tensor[]: Python gives a tuple
    // Several named returns through torch's Python bindings: the results
    // are a torch.return_types.NAME named tuple of this type.
    c10::TupleTypePtr return_type;
  };

  // The operator `target` names, or nullptr when LibTorch has none (or no
  // overload a graph can call). Cached.
  static std::shared_ptr<const AtenOp> find(const AtenTarget& target);

  // The overloads that can accept a node's call whatever values its Node
  // arguments turn out to hold: arity, keyword names and constant arguments
  // checked once, when a plan compiles the node. Throws FxError (Python's
  // message, Node arguments shown as `Node`) when none can.
  std::vector<const Overload*> candidates(const Node& node) const;

  // Calls the first overload that accepts `args` and `kwargs`: among all, or
  // among `candidates` (a plan's node; then no other overload is looked at).
  c10::IValue call(std::vector<c10::IValue> args, const Kwargs& kwargs) const;
  c10::IValue call(std::vector<c10::IValue> args, const Kwargs& kwargs,
                   const std::vector<const Overload*>& among) const;

  // Where a bound overload's parameter takes its value from.
  struct ParamSource {
    enum class Kind { kDefault, kPositional, kKeyword, kGathered };
    Kind kind = Kind::kDefault;
    size_t index = 0;  // into args (kPositional, the first of kGathered's
                       // ints) or kwargs (kKeyword)
  };
  struct Binding {
    const Overload* overload = nullptr;
    std::vector<ParamSource> sources;  // per parameter, schema order
  };
  // The overload call() would run for `args` and `kwargs`, and where each
  // of its parameters comes from; nullopt when none accepts them. Nothing
  // runs.
  std::optional<Binding> bind(const std::vector<c10::IValue>& args,
                              const Kwargs& kwargs) const;

  const std::vector<Overload>& overloads() const { return overloads_; }
  const AtenTarget& target() const { return target_; }

 private:
  AtenOp(AtenTarget target, std::vector<Overload> overloads)
      : target_(std::move(target)), overloads_(std::move(overloads)) {
    for (const Overload& ov : overloads_) all_.push_back(&ov);
  }
  static std::shared_ptr<const AtenOp> load(const AtenTarget& target);
  std::string invalid_call_message(const std::vector<c10::IValue>& args,
                                   const Kwargs& kwargs) const;

  AtenTarget target_;
  std::vector<Overload> overloads_;
  std::vector<const Overload*> all_;  // every overload, for call() without
                                      // a node's candidates
};

}  // namespace fx

#endif  // FX_CORE_RUNTIME_ATEN_ATEN_OP_H_
