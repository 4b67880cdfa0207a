#include "fx_core/capture/sym_int_node.h"

#include <c10/util/Exception.h>

#include <optional>
#include <typeinfo>
#include <utility>

namespace fx::capture {

CaptureSymNode::CaptureSymNode(std::weak_ptr<SymNodeOwner> owner,
                               sym::Expr expr, int64_t hint, Source source)
    : owner_(std::move(owner)),
      owner_raw_(owner_.lock().get()),
      expr_(std::move(expr)),
      hint_(hint),
      source_(std::move(source)) {}

CaptureSymNode::CaptureSymNode(const CaptureSymNode& sibling, sym::Expr expr,
                               int64_t hint, Source source)
    : owner_(sibling.owner_),
      owner_raw_(sibling.owner_raw_),
      expr_(std::move(expr)),
      hint_(hint),
      source_(std::move(source)) {}

SymNodeOwner& CaptureSymNode::owner() const {
  // The capture runs on one thread and owns the only strong reference, so
  // an unexpired owner_ is alive for the duration of this call.
  TORCH_CHECK(owner_raw_ != nullptr && !owner_.expired(),
              "fx::make_fx: the symbolic int ", expr_.str(),
              " is used after its capture ended");
  return *owner_raw_;
}

namespace {

// The class is final: an exact type check is a dynamic_cast without the
// hierarchy walk (LibTorch's size arithmetic asks this of every operand).
CaptureSymNode* as_capture_node(c10::SymIntNodeImpl* node) {
  if (node == nullptr || typeid(*node) != typeid(CaptureSymNode)) {
    return nullptr;
  }
  return static_cast<CaptureSymNode*>(node);
}

CaptureSymNode& as_capture(const c10::SymIntNode& node) {
  CaptureSymNode* n = as_capture_node(node.get());
  TORCH_CHECK(n != nullptr,
              "fx::make_fx: a symbolic int of another library met one of "
              "the capture's");
  return *n;
}

}  // namespace

namespace {

using Op = sym::ExprMemo::Op;

// `op` on two hints as Python computes it on ints, or nullopt where that
// needs care (overflow, a zero divisor): the expression's evaluation says.
std::optional<int64_t> hint_of(Op op, int64_t a, int64_t b) {
  int64_t r = 0;
  if (op == Op::kAdd) {
    if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  } else if (op == Op::kSub) {
    if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  } else if (op == Op::kMul) {
    if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  } else if (b <= 0 || a < 0) {
    return std::nullopt;
  } else {
    r = op == Op::kFloorDiv ? a / b : a % b;
  }
  return r;
}

// make_fx's names of the operators (operator.add, ...).
const char* name_of(Op op) {
  static const char* const kNames[] = {"add", "sub", "mul", "floordiv", "mod"};
  return kNames[static_cast<int>(op)];
}

}  // namespace

c10::SymIntNode CaptureSymNode::arithmetic(Op op,
                                           const c10::SymIntNode& other) {
  CaptureSymNode& b = as_capture(other);
  if (op == Op::kMul) {
    // make_fx's peephole: multiplying by a wrapped 1 is the other operand.
    if (b.is_constant() && b.hint_ == 1) {
      return c10::SymIntNode::reclaim_copy(this);
    }
    if (is_constant() && hint_ == 1) return other;
  }
  SymNodeOwner& capture = owner();
  sym::Expr e = capture.expr_memo().apply(op, expr_, b.expr_);
  Source source;
  source.kind = Source::Kind::kOperator;
  source.op = name_of(op);
  source.operands = {c10::SymIntNode::reclaim_copy(this), other};
  std::optional<int64_t> hint = hint_of(op, hint_, b.hint_);
  int64_t value = hint ? *hint : capture.guards().hint(e);
  return c10::make_intrusive<CaptureSymNode>(*this, std::move(e), value,
                                             std::move(source));
}

// c10::SymInt's comparison operators ask bool_() of the node eq() / lt()
// ... return, at once and always: the decision (and its guard, when it
// depends on a symbol) is taken here, and the node is the wrapped constant
// 0 or 1, shared by the capture.
c10::SymIntNode CaptureSymNode::compare(sym::Relation::Op op,
                                        const c10::SymIntNode& other) {
  CaptureSymNode& b = as_capture(other);
  const int64_t value =
      guards().decide(sym::Relation{op, expr_, b.expr_}) ? 1 : 0;
  if (c10::SymIntNode shared = owner().constant(value)) return shared;
  return c10::make_intrusive<CaptureSymNode>(*this, sym::Expr::integer(value),
                                             value, Source());
}

c10::SymIntNode CaptureSymNode::add(const c10::SymIntNode& other) {
  return arithmetic(Op::kAdd, other);
}
c10::SymIntNode CaptureSymNode::sub(const c10::SymIntNode& other) {
  return arithmetic(Op::kSub, other);
}
c10::SymIntNode CaptureSymNode::mul(const c10::SymIntNode& other) {
  return arithmetic(Op::kMul, other);
}
c10::SymIntNode CaptureSymNode::floordiv(const c10::SymIntNode& other) {
  return arithmetic(Op::kFloorDiv, other);
}
c10::SymIntNode CaptureSymNode::mod(const c10::SymIntNode& other) {
  return arithmetic(Op::kMod, other);
}
c10::SymIntNode CaptureSymNode::eq(const c10::SymIntNode& other) {
  return compare(sym::Relation::Op::kEq, other);
}
c10::SymIntNode CaptureSymNode::ne(const c10::SymIntNode& other) {
  return compare(sym::Relation::Op::kNe, other);
}
c10::SymIntNode CaptureSymNode::gt(const c10::SymIntNode& other) {
  return compare(sym::Relation::Op::kGt, other);
}
c10::SymIntNode CaptureSymNode::lt(const c10::SymIntNode& other) {
  return compare(sym::Relation::Op::kLt, other);
}
c10::SymIntNode CaptureSymNode::le(const c10::SymIntNode& other) {
  return compare(sym::Relation::Op::kLe, other);
}
c10::SymIntNode CaptureSymNode::ge(const c10::SymIntNode& other) {
  return compare(sym::Relation::Op::kGe, other);
}

c10::SymIntNode CaptureSymNode::clone() {
  return c10::SymIntNode::reclaim_copy(this);
}

c10::SymIntNode CaptureSymNode::wrap(int64_t num) {
  if (c10::SymIntNode shared = owner().constant(num)) return shared;
  return c10::make_intrusive<CaptureSymNode>(*this, sym::Expr::integer(num),
                                             num, Source());
}

int64_t CaptureSymNode::guard_int(const char*, int64_t) {
  if (expr_.as_integer()) return *expr_.as_integer();
  return guards().specialize(expr_);
}

int64_t CaptureSymNode::int_() { return guard_int(__FILE__, __LINE__); }

bool CaptureSymNode::bool_() { return guard_int(__FILE__, __LINE__) != 0; }

std::string CaptureSymNode::str() { return expr_.str(); }

CaptureSymNode* capture_node(const c10::SymInt& value) {
  if (!value.is_symbolic()) return nullptr;
  return as_capture_node(value.toSymIntNodeImplUnowned());
}

}  // namespace fx::capture
