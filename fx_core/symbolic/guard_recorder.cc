#include "fx_core/symbolic/guard_recorder.h"

#include <algorithm>
#include <utility>

namespace fx::sym {

Relation negated(const Relation& relation) {
  using Op = Relation::Op;
  Op op = Op::kEq;
  switch (relation.op) {
    case Op::kEq:
      op = Op::kNe;
      break;
    case Op::kNe:
      op = Op::kEq;
      break;
    case Op::kLt:
      op = Op::kGe;
      break;
    case Op::kGe:
      op = Op::kLt;
      break;
    case Op::kLe:
      op = Op::kGt;
      break;
    case Op::kGt:
      op = Op::kLe;
      break;
  }
  return Relation{op, relation.lhs, relation.rhs};
}

GuardRecorder::Decision& GuardRecorder::lookup(const Relation& relation) {
  Identity identity(relation.op, relation.lhs, relation.rhs);
  auto found = by_identity_.find(identity);
  if (found != by_identity_.end()) return *found->second.decision;
  Decision& d = lookup_structure(relation);
  by_identity_.emplace(identity, Known{relation, &d});
  return d;
}

GuardRecorder::Decision& GuardRecorder::lookup_structure(
    const Relation& relation) {
  size_t key = relation.lhs.hash() * 31 + relation.rhs.hash() +
               static_cast<size_t>(relation.op);
  auto [first, last] = decisions_.equal_range(key);
  for (auto it = first; it != last; ++it) {
    if (it->second.relation == relation) return it->second;
  }
  std::optional<bool> known = relation.decided();
  bool holds = known ? *known : relation.compare(hints_);
  return decisions_.emplace(key, Decision{relation, known, holds})->second;
}

bool GuardRecorder::value(const Relation& relation) {
  return lookup(relation).holds;
}

bool GuardRecorder::decide(const Relation& relation) {
  Decision& d = lookup(relation);
  if (!d.known && !d.recorded) {
    record(d.holds ? relation : negated(relation));
    d.recorded = true;
  }
  return d.holds;
}

int64_t GuardRecorder::specialize(const Expr& expr) {
  if (std::optional<int64_t> known = expr.as_integer()) return *known;
  int64_t value = hint(expr);
  record(Relation{Relation::Op::kEq, expr, Expr::integer(value)});
  return value;
}

int64_t GuardRecorder::hint(const Expr& expr) const {
  return expr.evaluate(hints_);
}

void GuardRecorder::record(Relation guard) {
  if (std::find(guards_.begin(), guards_.end(), guard) != guards_.end()) {
    return;
  }
  guards_.push_back(std::move(guard));
}

}  // namespace fx::sym
