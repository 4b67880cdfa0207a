// fx::sym::GuardRecorder: decisions on symbolic sizes, each recorded as the
// guard that makes it hold (torch 1.13's ShapeEnv.evaluate_expr: a branch on
// a SymInt takes the hint's side and remembers why).
//
// Contract:
//  - Every symbol a decision may name has a hint (its value for the shapes
//    being traced); a relation on an unhinted symbol throws FxError naming
//    it.
//  - decide() returns the relation's value at the hints. A relation sympy
//    decides on its own (no symbol, or the assumptions settle it) records
//    nothing; any other records the relation that holds (the negation when
//    it is false: Ne for Eq, Ge for Lt, ...), once.
//  - value() is decide()'s value without recording anything.
//  - Decisions are kept by the relation's structure, so deciding the same
//    relation again (LibTorch's size checks repeat the same comparisons)
//    costs a lookup; a relation on the very same expression nodes is found
//    by their identity, without comparing structures.
//  - specialize() turns an expression into its hint's integer, guarding
//    that it equals it (torch's guard_int).
//  - No LibTorch.
#ifndef FX_CORE_SYMBOLIC_GUARD_RECORDER_H_
#define FX_CORE_SYMBOLIC_GUARD_RECORDER_H_

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "fx_core/symbolic/node_pair_key.h"
#include "fx_core/symbolic/sym_expr.h"
#include "fx_core/symbolic/sym_relation.h"

namespace fx::sym {

class GuardRecorder {
 public:
  explicit GuardRecorder(Bindings hints) : hints_(std::move(hints)) {}

  bool decide(const Relation& relation);
  bool value(const Relation& relation);
  int64_t specialize(const Expr& expr);
  // The expression's value at the hints, recording nothing.
  int64_t hint(const Expr& expr) const;

  const Bindings& hints() const { return hints_; }
  // In the order they were recorded.
  const std::vector<Relation>& guards() const { return guards_; }

 private:
  struct Decision {
    Relation relation;
    std::optional<bool> known;  // decided without the hints
    bool holds;
    bool recorded = false;
  };
  Decision& lookup(const Relation& relation);
  Decision& lookup_structure(const Relation& relation);
  void record(Relation guard);

  Bindings hints_;
  std::vector<Relation> guards_;
  std::unordered_multimap<size_t, Decision> decisions_;  // by structure
  // The same decisions by the identity of the sides' nodes; `sides` keeps
  // those nodes alive so an identity is not reused.
  using Identity = NodePairKey<Relation::Op>;
  struct Known {
    Relation sides;
    Decision* decision;  // in decisions_, whose nodes do not move
  };
  absl::flat_hash_map<Identity, Known> by_identity_;
};

// The relation that holds when `relation` does not: Eq <-> Ne, Lt <-> Ge,
// Le <-> Gt, the sides kept.
Relation negated(const Relation& relation);

}  // namespace fx::sym

#endif  // FX_CORE_SYMBOLIC_GUARD_RECORDER_H_
