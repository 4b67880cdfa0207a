// fx::capture::CompositeReplay: symbolic mode's memo of composite calls.
//
// LibTorch's composite kernels (CompositeImplicitAutograd: reshape,
// flatten, ...) do their size arithmetic on SymInts: reshape makes about 40
// symbolic ints a call (infer_size, computeStride), each an expression,
// a guard decision or both. Their result is decided by what they read:
// the sizes and strides of their tensors, their integer arguments and the
// dispatch state. When a composite call makes exactly one recorded call
// (reshape -> _reshape_alias), that call is learnt as a recipe over the
// composite's arguments, and a later call whose arguments have the same
// expressions (by identity: the capture's memos hand out the same
// expression objects for the same shapes) runs the recipe instead of the
// kernel.
//
// Contract:
//  - key_of() identifies a call: the operator, grad mode and the local
//    dispatch keys, each tensor's dtype, key set, requires_grad, storage
//    offset and its size and stride expressions, each symbolic int's
//    expression, and which arguments are the same object (a symbolic int
//    that is the same node as another, or a size of one of the tensors).
//    It fails (no replay) on a tensor that is not symbolic and on argument
//    kinds it does not cover. The expressions a key names are kept alive
//    with its entry, learnt or refused.
//  - learn() keeps a recipe only when the inner call's arguments are the
//    composite's tensors, its symbolic ints, sizes / strides / numel of its
//    tensors, integers, or arithmetic on these made during the call (the
//    arithmetic is recorded as nodes again, operands in the same order).
//    The caller checks the call made nothing else (no other recorded call,
//    no graph node outside the inner call) and made its call in the
//    dispatch state it was called in (grad mode, local dispatch keys).
//  - instantiate() gives the inner call's arguments for a call with the
//    same key: fresh nodes for the arithmetic (their expressions and hints
//    are the recipe's, as the same expressions give the same values), the
//    call's own symbolic ints and tensor sizes otherwise. The guards the
//    kernel's decisions recorded the first time are recorded already, and
//    the same expressions decide alike, so the replay adds none.
//  - set_enabled(false) turns replay off for captures started after it
//    (tests compare both ways; benchmarks measure both); replayed() counts
//    the calls replayed.
#ifndef FX_CORE_CAPTURE_COMPOSITE_REPLAY_H_
#define FX_CORE_CAPTURE_COMPOSITE_REPLAY_H_

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "fx_core/capture/sym_int_node.h"
#include "fx_core/symbolic/sym_expr.h"

namespace fx::capture {

class CompositeReplay {
 public:
  using Key = absl::InlinedVector<intptr_t, 48>;

  // A recipe's inner call.
  struct Recipe;

  // Process-wide; on by default.
  static void set_enabled(bool enabled);
  static bool enabled();
  // Calls replayed so far, process-wide.
  static uint64_t replayed();

  explicit CompositeReplay(std::weak_ptr<SymNodeOwner> owner)
      : owner_(std::move(owner)) {}
  ~CompositeReplay();

  // The key of `schema` called with `args`; false when the call is not
  // covered.
  bool key_of(const c10::FunctionSchema& schema,
              c10::ArrayRef<c10::IValue> args, Key* key) const;

  // What was learnt for `key`: a recipe, or nullptr (unknown, or known not
  // to replay: `*known` says which).
  const Recipe* find(const Key& key, bool* known) const;

  // Learns from a composite call with `args` that made one call, `inner`
  // with `inner_args`, and returned its results. Records a refusal when the
  // inner arguments are not expressible over `args`.
  void learn(Key key, c10::ArrayRef<c10::IValue> args,
             const c10::OperatorHandle& inner,
             c10::ArrayRef<c10::IValue> inner_args);
  // Records that calls of `key` (made with `args`) run LibTorch's kernel.
  void refuse(Key key, c10::ArrayRef<c10::IValue> args);

  // The recipe's inner call and its arguments for a call with `args`.
  const c10::OperatorHandle& inner(const Recipe& recipe) const;
  std::vector<c10::IValue> instantiate(const Recipe& recipe,
                                       c10::ArrayRef<c10::IValue> args) const;

 private:
  std::weak_ptr<SymNodeOwner> owner_;
  // nullptr recipe: known not to replay. `kept` holds the expressions
  // whose identities the key holds, so no other expression takes their
  // addresses.
  struct Entry {
    std::shared_ptr<const Recipe> recipe;
    std::vector<sym::Expr> kept;
  };
  absl::flat_hash_map<Key, Entry> recipes_;
};

}  // namespace fx::capture

#endif  // FX_CORE_CAPTURE_COMPOSITE_REPLAY_H_
