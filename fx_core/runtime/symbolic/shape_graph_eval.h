// Evaluating a TorchScript shape function on symbolic sizes.
//
// LibTorch describes many operators' output shapes as TorchScript functions
// of their inputs' shapes (torch/csrc/jit/runtime/symbolic_shape_registry.h:
// `def linear(input: List[int], weight: List[int], bias: Optional[List[int]])
// -> List[int]`). evaluate_shape_graph() runs such a graph with integers that
// are symbolic expressions (fx::sym::Expr), as torch 1.13 runs its Python
// meta functions on SymInts:
//  - integer arithmetic (+, -, *, //, %, neg, max, min) builds expressions;
//  - a comparison of expressions that sympy does not decide is decided at
//    the hints and recorded as a guard (GuardRecorder), so a branch taken on
//    a size becomes a guard;
//  - list lengths (ranks), list indices and loop trip counts are concrete;
//    an expression used as one is specialised to its hint (guarded equal);
//  - floats are concrete (a float computed from a symbol throws FxError);
//  - a RaiseException in the graph (the operator's own shape check failed)
//    throws FxError with `op_name` and the check's message.
// Node kinds outside what LibTorch 1.13's registered shape graphs use throw
// FxError naming the kind. The header keeps LibTorch out (forward
// declarations only).
#ifndef FX_CORE_RUNTIME_SYMBOLIC_SHAPE_GRAPH_EVAL_H_
#define FX_CORE_RUNTIME_SYMBOLIC_SHAPE_GRAPH_EVAL_H_

#include <memory>
#include <string>
#include <vector>

#include "fx_core/symbolic/guard_recorder.h"
#include "fx_core/symbolic/sym_expr.h"

namespace torch::jit {
struct Graph;
}  // namespace torch::jit

namespace fx {

// A value of a shape function: None, bool, int (an expression), float,
// str, list (shared and mutable, as TorchScript lists are) or tuple.
struct SymValue {
  enum class Kind { kNone, kBool, kInt, kFloat, kString, kList, kTuple };
  using Items = std::shared_ptr<std::vector<SymValue>>;

  Kind kind = Kind::kNone;
  bool boolean = false;
  sym::Expr integer;
  double number = 0;
  std::string text;
  Items items;

  static SymValue none() { return SymValue(); }
  static SymValue of_bool(bool b);
  static SymValue of_int(sym::Expr e);
  static SymValue of_float(double d);
  static SymValue of_string(std::string s);
  static SymValue list(std::vector<SymValue> items);
  static SymValue tuple(std::vector<SymValue> items);
  // A list of integers: a tensor's sizes.
  static SymValue int_list(const std::vector<sym::Expr>& sizes);

  bool is_none() const { return kind == Kind::kNone; }
  // For messages: "[2*s0, 3]", "None".
  std::string str() const;
};

// Runs `graph` on `inputs` (one per graph input; fewer inputs than the
// graph declares are an error). Returns the graph's outputs.
std::vector<SymValue> evaluate_shape_graph(const torch::jit::Graph& graph,
                                           std::vector<SymValue> inputs,
                                           sym::GuardRecorder& guards,
                                           const std::string& op_name);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_SYMBOLIC_SHAPE_GRAPH_EVAL_H_
