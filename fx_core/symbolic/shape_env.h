// fx::sym::ShapeEnv: what a symbolic graph assumes of its inputs' shapes
// (torch 1.13's ShapeEnv, as make_fx(tracing_mode="symbolic") leaves it on
// the GraphModule), and the check of real inputs against it.
//
// Contract:
//  - Each input is a placeholder whose sizes the graph was captured for, one
//    expression per dimension: a symbol (a size that may vary, named as
//    torch 1.13 names it, `t0.size(0)`), an integer (a size the capture
//    specialised: 0 and 1 always are, as in 1.13, so a symbol never takes
//    the value 0 or 1), or an expression of symbols. The first dimension that
//    holds a symbol alone is its source; a symbol at several dimensions (1.13's
//    duck sizing: sizes equal at capture share one symbol) requires them equal.
//  - Guards are relations that held at capture and must hold for every
//    input the graph runs on (1.13's guards, each as the relation that
//    holds: a guard recorded False is kept negated). Each keeps the text
//    the capture printed it as (1.13's format_guards() line: the expression
//    it evaluated and the value it had, `Not(Eq(a, b))`, `t0.size(1)/2 > 1`),
//    or its relation's text when the capture gave none.
//  - Hints are the symbols' values at capture (1.13's var_to_val).
//  - bind() gives every symbol's value for real sizes, or an error that
//    names the placeholder, the dimension and what it breaks (a rank, a
//    specialised size, a duck-sized equality, a guard with the values of its
//    symbols and their sources). It never throws.
//  - No LibTorch: sizes are plain integers.
#ifndef FX_CORE_SYMBOLIC_SHAPE_ENV_H_
#define FX_CORE_SYMBOLIC_SHAPE_ENV_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "fx_core/symbolic/sym_expr.h"
#include "fx_core/symbolic/sym_relation.h"

namespace fx::sym {

// A size or stride of a placeholder: where a symbol's value is read from.
struct DimSource {
  std::string placeholder;
  size_t dim = 0;
  bool stride = false;
  // "placeholder 'x_1' dimension 0", "placeholder 'x_1' stride 0"
  std::string str() const;
};

// A tensor's sizes and strides.
struct TensorShape {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
};

class ShapeEnv {
 public:
  struct Input {
    std::string placeholder;
    std::vector<Expr> sizes;
    std::vector<Expr> strides;  // empty: not declared
  };

  // Declares `placeholder`'s sizes (and strides, when not empty), in
  // placeholder order. Strides are symbols, integers and expressions as
  // sizes are (1.13 makes them symbolic too).
  void add_input(std::string placeholder, std::vector<Expr> sizes,
                 std::vector<Expr> strides = {});
  // A symbol's value at capture.
  void set_hint(std::string_view symbol, int64_t value);
  // A relation every input must satisfy, and the text the capture printed
  // it as (empty: the relation's own). A relation sympy decides on its own
  // (no symbol left) is dropped when true, refused (FxError) when false; one
  // held already with the same text is dropped.
  void add_guard(Relation guard, std::string printed = {});

  const std::vector<Input>& inputs() const { return inputs_; }
  const std::vector<Relation>& guards() const { return guards_; }
  // Guard i as the capture printed it (guards()[i]'s text when it gave none).
  const std::string& guard_text(size_t i) const { return guard_texts_[i]; }
  // The hints, in the order they were set.
  const std::vector<std::pair<std::string, int64_t>>& hints() const {
    return hints_;
  }
  // Symbols in the order their sources appear, then any only guards name.
  std::vector<std::string> symbols() const;
  std::optional<int64_t> hint(std::string_view symbol) const;
  // Where the symbol's value is read from, or nullopt.
  std::optional<DimSource> source(std::string_view symbol) const;
  bool empty() const { return inputs_.empty() && guards_.empty(); }

  // The shape of a placeholder (nullopt: its value is not a tensor).
  using ShapeOf =
      std::function<std::optional<TensorShape>(const std::string& placeholder)>;
  // Every symbol's value for these shapes, checked against the inputs'
  // declarations and every guard.
  absl::StatusOr<Bindings> bind(const ShapeOf& shape_of) const;

  // torch 1.13's ShapeEnv.format_guards(): " - GUARD" lines, each guard as
  // guard_text() gives it (byte for byte 1.13's for a make_fx capture whose
  // printed texts came in with its guards).
  std::string format_guards() const;

 private:
  // A dimension checked once every symbol is bound.
  struct Deferred {
    const Expr* size;
    DimSource at;
    int64_t actual;
  };
  absl::Status bind_input(const Input& input, const TensorShape& shape,
                          Bindings& bindings,
                          std::vector<Deferred>& later) const;
  // One size or stride: a fresh symbol is bound, an integer compared, the
  // rest deferred.
  absl::Status bind_one(const Expr& declared, int64_t actual, DimSource at,
                        Bindings& bindings, std::vector<Deferred>& later) const;
  absl::Status check_deferred(const Deferred& d,
                              const Bindings& bindings) const;
  absl::Status check_guard(size_t i, const Bindings& bindings) const;
  // "t0.size(1) = 7 (placeholder 'x_1' dimension 1)" for each symbol.
  std::string describe_values(const std::vector<std::string>& symbols,
                              const Bindings& bindings) const;

  std::vector<Input> inputs_;
  std::vector<Relation> guards_;
  std::vector<std::string> guard_texts_;  // one per guard
  // Each guard's symbols, sorted (computed once: bind() runs per call).
  std::vector<std::vector<std::string>> guard_symbols_;
  std::vector<std::pair<std::string, int64_t>> hints_;
};

// An environment of hints and guards only (what a capture recorded, as
// text: `{"t0.size(0)": 4}`, `["Eq(Mod(t0.size(1), 2), 0)"]`), every text
// parsed; the error names the guard or hint that does not parse. `printed`
// is empty or holds one text per guard: how the capture printed it
// (guard_text(); never parsed).
absl::StatusOr<ShapeEnv> declared_shape_env(
    const std::vector<std::pair<std::string, int64_t>>& hints,
    const std::vector<std::string>& guards,
    const std::vector<std::string>& printed = {});

}  // namespace fx::sym

#endif  // FX_CORE_SYMBOLIC_SHAPE_ENV_H_
