// fx::capture::SymbolicCapture: what make_fx's symbolic mode adds to a
// capture (torch 1.13's make_fx(tracing_mode="symbolic"): FakeTensors with
// symbolic sizes under a ShapeEnv, ProxySymDispatchMode recording SymInt
// arithmetic).
//
// Contract:
//  - The example inputs' sizes become symbols named as 1.13 names them
//    (`t0.size(0)`, `t0.stride(0)`; t<k> counts the inputs): sizes, then
//    strides, each input in order; 0 and 1 are specialised (integers);
//    equal values share one symbol (duck sizing). Their values are the
//    hints. Or, with create_declared(), the sizes and strides the caller
//    declares, expressions of its own symbols with its hints (symbolic
//    shape propagation capturing one node's call): then every size the
//    capture computes is an expression of those symbols.
//  - input(i) is example i as a SymbolicTensorImpl (symbolic_tensor.h).
//  - Each recorded operator runs on meta tensors at the hints (hints()
//    turns SymInts into their hints); wrap_results() then replaces its
//    tensor results by symbolic tensors whose sizes are the operator's
//    shape function (runtime/symbolic/shape_functions.h) evaluated on the
//    arguments' expressions, checked equal to the kernel's at the hints. A
//    result that is an argument's meta tensor (in-place, out=) is that
//    argument. Strides: a view's are its base's where they have the same
//    value at the hints, else dense in the order of the hint strides, else
//    the hints. An operator with symbolic arguments and no shape function
//    throws FxError naming it.
//  - argument() is a SymInt as a node argument: an integer, or the node
//    that computes it, made now if it was not yet (sym_size / sym_stride /
//    sym_numel of its tensor's current node, operator.OP of its operands).
//  - Decisions on symbols (comparisons, concrete sizes asked for) are
//    guards (sym::GuardRecorder at the hints); shape_env() gives the hints
//    and guards as a GraphModule declares them (set_shape_env), and
//    tensor_meta(i) placeholder i's meta['tensor_meta'] with its symbolic
//    sizes and strides.
#ifndef FX_CORE_CAPTURE_SYMBOLIC_CAPTURE_H_
#define FX_CORE_CAPTURE_SYMBOLIC_CAPTURE_H_

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <ATen/core/stack.h>

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "fx_core/capture/sym_int_node.h"
#include "fx_core/ir/argument.h"
#include "fx_core/runtime/symbolic/shape_graph_eval.h"
#include "fx_core/symbolic/guard_recorder.h"
#include "fx_core/symbolic/shape_env.h"
#include "fx_core/symbolic/sym_expr.h"

namespace c10 {
struct FunctionSchema;
}  // namespace c10

namespace fx {
class Graph;
class Node;
}  // namespace fx

namespace fx::capture {

class SymbolicCapture final
    : public SymNodeOwner,
      public std::enable_shared_from_this<SymbolicCapture> {
 public:
  // The node a tracked tensor currently stands for (nullptr: untracked).
  using NodeOf = std::function<Node*(const c10::TensorImpl*)>;

  static std::shared_ptr<SymbolicCapture> create(
      Graph& graph, NodeOf node_of, const std::vector<at::Tensor>& examples);

  // An input's symbolic sizes and strides.
  struct InputShape {
    std::vector<sym::Expr> sizes, strides;
  };
  // Inputs of declared shapes (one per example; an empty `strides`: dense
  // in the example's order of strides, else the example's), `hints` giving
  // every symbol they name its value. Throws FxError when an example's
  // rank or sizes are not its shape's at the hints.
  static std::shared_ptr<SymbolicCapture> create_declared(
      Graph& graph, NodeOf node_of, const std::vector<at::Tensor>& examples,
      std::vector<InputShape> shapes, const sym::Bindings& hints);

  sym::GuardRecorder& guards() override { return guards_; }
  sym::ExprMemo& expr_memo() override { return expr_memo_; }
  c10::SymIntNode constant(int64_t value) override;

  at::Tensor input(size_t i);
  // The value with SymInts replaced by their hints (lists too) and
  // symbolic tensors by their meta tensors.
  c10::IValue hints(const c10::IValue& value) const;
  void wrap_results(const c10::FunctionSchema& schema,
                    const std::vector<c10::IValue>& args,
                    torch::jit::Stack* stack);
  Argument argument(const c10::SymInt& value);
  // `tensor` got a (new) node: its sizes' nodes are made anew at next use.
  void retrack(const at::Tensor& tensor);
  // A symbolic tensor standing for the same value (fresh nodes).
  at::Tensor alias(const at::Tensor& tensor);

  std::shared_ptr<sym::ShapeEnv> shape_env() const;
  Argument tensor_meta(size_t i) const;

  SymbolicCapture(Graph& graph, NodeOf node_of,
                  const std::vector<at::Tensor>& examples, sym::Bindings hints);

 private:
  Node* node_of(CaptureSymNode& n);
  Node* tensor_node(const c10::TensorImpl* tensor) const;
  bool is_symbolic(const c10::IValue& value) const;
  using Exprs = std::shared_ptr<const std::vector<sym::Expr>>;
  at::Tensor wrap(const at::Tensor& meta, Exprs sizes,
                  const std::vector<c10::IValue>& args);
  // A shape rule's result as a tensor's sizes, checked against the kernel's
  // `result` at the hints (evaluated once per result: the same result is
  // the same expressions, so the same hints).
  Exprs result_sizes(const SymValue& shape, const at::Tensor& result,
                     const c10::FunctionSchema& schema);
  // One result: its shape function value (nullptr: concrete sizes).
  c10::IValue wrap_value(const c10::IValue& result, const SymValue* shape,
                         const std::vector<c10::IValue>& args,
                         const c10::FunctionSchema& schema);
  // The shape function's value for `schema` called with `args` (some
  // symbolic); FxError when it has none.
  const SymValue& result_shapes(const c10::FunctionSchema& schema,
                                const std::vector<c10::IValue>& args);

  Graph& graph_;
  NodeOf node_of_tensor_;
  std::vector<at::Tensor> examples_;
  std::vector<InputShape> shapes_;
  std::vector<std::pair<std::string, int64_t>> symbols_;  // in order
  sym::GuardRecorder guards_;
  sym::ExprMemo expr_memo_;
  // The shared wrapped constants kFirstShared .. kFirstShared + kShared - 1.
  static constexpr int64_t kFirstShared = -1;
  static constexpr int64_t kShared = 66;
  std::array<c10::SymIntNode, kShared> constants_;
  // Shape function results by operator and argument expressions (their
  // structure, hashed).
  struct MemoEntry {
    const c10::FunctionSchema* schema;
    std::vector<SymValue> inputs;
    SymValue result;
  };
  std::unordered_multimap<size_t, MemoEntry> shape_memo_;
  const SymValue& structural_result(const c10::FunctionSchema& schema,
                                    const std::vector<SymValue>& inputs,
                                    size_t key);
  // Expression node addresses and integers (inline: built on every call).
  using IdentityKey = absl::InlinedVector<intptr_t, 32>;
  // The same results by the identities of the arguments' expression nodes
  // (a call on the same nodes skips building its inputs); `kept` holds
  // those expressions alive so their identities are not reused.
  struct IdentityEntry {
    std::vector<SymValue> kept;
    const SymValue* result;  // in shape_memo_, whose nodes do not move
  };
  absl::flat_hash_map<IdentityKey, IdentityEntry> identity_memo_;
  // A result's strides by the identities of its sizes' expressions, its
  // strides at the hints and the identities of the strides of the inputs it
  // views; `kept` keeps those expressions alive so their identities are not
  // reused.
  struct StridesOf {
    std::vector<std::vector<sym::Expr>> kept;
    Exprs strides;
  };
  absl::flat_hash_map<IdentityKey, StridesOf> strides_memo_;
  using Bases = absl::InlinedVector<const std::vector<sym::Expr>*, 4>;
  const Exprs& result_strides(const std::vector<sym::Expr>& sizes,
                              const at::Tensor& meta, const Bases& bases);
  // result_sizes' results and their values at the hints, by the shape
  // rule's result (in shape_memo_, whose nodes do not move).
  struct SizesOf {
    Exprs sizes;
    std::optional<std::vector<int64_t>> hints;  // none: not a list of ints
  };
  absl::flat_hash_map<const SymValue*, SizesOf> sizes_of_;
};

}  // namespace fx::capture

#endif  // FX_CORE_CAPTURE_SYMBOLIC_CAPTURE_H_
