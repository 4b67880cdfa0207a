// fx::capture::CaptureSymNode: the symbolic integers of make_fx's symbolic
// mode (torch 1.13's PySymInt under ProxySymDispatchMode, for C++ code).
//
// Contract:
//  - A node is one c10::SymInt value: copies of a SymInt share it (identity
//    is the node, as make_fx keys its proxy slots on the PySymInt object).
//    It holds its expression (fx::sym::Expr over the inputs' symbols), its
//    hint (the value at the example inputs) and how its graph node is made
//    at first use (its Source): `torch.ops.aten.sym_size(t, d)` (and
//    sym_stride / sym_numel) for a tensor's size, `operator.OP(a, b)` for
//    arithmetic, nothing for a wrapped constant (it is recorded as the
//    integer). Nothing is recorded until a node is used as an argument of a
//    recorded call (make_fx's thunks).
//  - add / sub / mul / floordiv / mod compute the expression as sympy does
//    and make a new node; mul by a wrapped constant 1 is the other operand
//    itself (make_fx's peephole). A comparison is decided at the hints when
//    it is made, its guard recorded then (c10::SymInt's operators ask
//    bool_() of every comparison node at once), and gives the shared
//    constant 0 or 1. guard_int() / int_() specialise the expression to its
//    hint (guarded).
//  - truediv, sym_float and ceil are not supported (c10::Error), as they
//    have no SymInt result in 1.13's C++.
//  - A node outliving its capture throws c10::Error when asked to compute.
// Cost: LibTorch's size arithmetic (computeStride, infer_size) makes tens of
// nodes per reshape, so a node is one allocation from a per-thread free list
// (support/free_list.h): its operands are inline,
// its capture is reached without locking, arithmetic on expressions it has
// seen is a lookup (sym::ExprMemo), and the capture hands out one shared
// node per small wrapped constant.
#ifndef FX_CORE_CAPTURE_SYM_INT_NODE_H_
#define FX_CORE_CAPTURE_SYM_INT_NODE_H_

#include <c10/core/SymInt.h>
#include <c10/core/SymIntNodeImpl.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fx_core/support/free_list.h"
#include "fx_core/symbolic/expr_memo.h"
#include "fx_core/symbolic/guard_recorder.h"
#include "fx_core/symbolic/sym_expr.h"
#include "fx_core/symbolic/sym_relation.h"

namespace c10 {
struct TensorImpl;
}  // namespace c10

namespace fx {
class Node;
}  // namespace fx

namespace fx::capture {

// What a node asks of the capture it belongs to.
class SymNodeOwner {
 public:
  virtual ~SymNodeOwner() = default;
  virtual sym::GuardRecorder& guards() = 0;
  virtual sym::ExprMemo& expr_memo() = 0;
  // A node for the wrapped constant `value`: shared by every use when the
  // owner keeps one (constants have no graph node, so sharing is unseen),
  // else null.
  virtual c10::SymIntNode constant(int64_t value) = 0;
};

class CaptureSymNode final : public c10::SymIntNodeImpl {
 public:
  // How the graph node is made at first use.
  struct Source {
    enum class Kind { kConstant, kSize, kStride, kNumel, kOperator };
    Kind kind = Kind::kConstant;
    const c10::TensorImpl* tensor = nullptr;  // kSize, kStride, kNumel
    int64_t dim = 0;                          // kSize, kStride
    const char* op = nullptr;                 // kOperator: "mul"
    std::array<c10::SymIntNode, 2> operands;  // kOperator
  };

  CaptureSymNode(std::weak_ptr<SymNodeOwner> owner, sym::Expr expr,
                 int64_t hint, Source source);

  const sym::Expr& expr() const { return expr_; }
  int64_t hint() const { return hint_; }
  const Source& source() const { return source_; }
  bool is_constant() const { return source_.kind == Source::Kind::kConstant; }
  // The graph node made for it, or nullptr; reset when the tensor whose
  // size it is gets a new node (make_fx re-tracks the tensor's sizes).
  Node* node = nullptr;

  c10::SymIntNode add(const c10::SymIntNode& other) override;
  c10::SymIntNode sub(const c10::SymIntNode& other) override;
  c10::SymIntNode mul(const c10::SymIntNode& other) override;
  c10::SymIntNode floordiv(const c10::SymIntNode& other) override;
  c10::SymIntNode mod(const c10::SymIntNode& other) override;
  c10::SymIntNode eq(const c10::SymIntNode& other) override;
  c10::SymIntNode ne(const c10::SymIntNode& other) override;
  c10::SymIntNode gt(const c10::SymIntNode& other) override;
  c10::SymIntNode lt(const c10::SymIntNode& other) override;
  c10::SymIntNode le(const c10::SymIntNode& other) override;
  c10::SymIntNode ge(const c10::SymIntNode& other) override;
  c10::SymIntNode clone() override;
  c10::SymIntNode wrap(int64_t num) override;
  int64_t guard_int(const char* file, int64_t line) override;
  int64_t int_() override;
  bool bool_() override;
  std::string str() override;

  // A node of `sibling`'s capture (no lock of the owner).
  CaptureSymNode(const CaptureSymNode& sibling, sym::Expr expr, int64_t hint,
                 Source source);

  // LibTorch's size arithmetic makes and drops these by the million on the
  // capturing thread: their memory is recycled (support/free_list.h).
  static void* operator new(size_t n) {
    return FreeList<sizeof(CaptureSymNode)>::allocate(n);
  }
  static void operator delete(void* p, size_t n) {
    FreeList<sizeof(CaptureSymNode)>::release(p, n);
  }

 private:
  // The capture, checked alive.
  SymNodeOwner& owner() const;
  sym::GuardRecorder& guards() const { return owner().guards(); }
  c10::SymIntNode arithmetic(sym::ExprMemo::Op op,
                             const c10::SymIntNode& other);
  c10::SymIntNode compare(sym::Relation::Op op, const c10::SymIntNode& other);

  std::weak_ptr<SymNodeOwner> owner_;
  // owner_'s object, used only while owner_ has not expired.
  SymNodeOwner* owner_raw_;
  sym::Expr expr_;
  int64_t hint_;
  Source source_;
};

// The capture node behind a symbolic SymInt, or nullptr (a plain int, or
// another library's node).
CaptureSymNode* capture_node(const c10::SymInt& value);

}  // namespace fx::capture

#endif  // FX_CORE_CAPTURE_SYM_INT_NODE_H_
