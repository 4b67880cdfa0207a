#include "fx_core/runtime/symbolic/symbolic_shape_prop.h"

#include <ATen/core/Tensor.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "fx_core/ir/graph.h"
#include "fx_core/runtime/aten/aten_op.h"
#include "fx_core/runtime/aten/aten_target.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/meta_execution.h"
#include "fx_core/runtime/symbolic/shape_functions.h"
#include "fx_core/runtime/symbolic/shape_graph_eval.h"
#include "fx_core/runtime/symbolic/symbolic_call_capture.h"
#include "fx_core/runtime/symbolic/symbolic_indexing.h"
#include "fx_core/runtime/symbolic/symbolic_strides.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "fx_core/symbolic/guard_recorder.h"

namespace fx {

using sym::Expr;
using Kind = SymbolicValue::Kind;

bool SymbolicValue::has_symbols() const {
  auto symbolic = [](const Expr& e) { return !e.as_integer().has_value(); };
  switch (kind) {
    case Kind::kTensor:
      return std::any_of(sizes.begin(), sizes.end(), symbolic) ||
             std::any_of(strides.begin(), strides.end(), symbolic);
    case Kind::kInt:
      return symbolic(integer);
    case Kind::kSequence:
      return std::any_of(
          items.begin(), items.end(),
          [](const SymbolicValue& v) { return v.has_symbols(); });
    case Kind::kOther:
      return false;
  }
  return false;
}

namespace {

std::vector<Expr> integers(c10::IntArrayRef values) {
  std::vector<Expr> out;
  for (int64_t v : values) out.push_back(Expr::integer(v));
  return out;
}

}  // namespace

SymbolicValue concrete_symbolic_value(const c10::IValue& v) {
  SymbolicValue out;
  out.hint = v;
  if (v.isTensor() && v.toTensor().defined()) {
    out.kind = Kind::kTensor;
    out.sizes = integers(v.toTensor().sizes());
    out.strides = integers(v.toTensor().strides());
  } else if (v.isInt()) {
    out.kind = Kind::kInt;
    out.integer = Expr::integer(v.toInt());
  } else if (is_sequence(v)) {
    out.kind = Kind::kSequence;
    for (const c10::IValue& item : sequence_elements(v)) {
      out.items.push_back(concrete_symbolic_value(item));
    }
  }
  return out;
}

namespace {

SymbolicValue concrete(const c10::IValue& v) {
  return concrete_symbolic_value(v);
}

SymbolicValue tensor_value(std::vector<Expr> sizes, const c10::IValue& hint) {
  SymbolicValue out;
  out.kind = Kind::kTensor;
  out.hint = hint;
  bool symbolic = std::any_of(sizes.begin(), sizes.end(), [](const Expr& e) {
    return !e.as_integer().has_value();
  });
  out.strides = symbolic ? dense_strides(sizes, hint.toTensor())
                         : integers(hint.toTensor().strides());
  out.sizes = std::move(sizes);
  return out;
}

SymbolicValue int_value(Expr e, const c10::IValue& hint) {
  SymbolicValue out;
  out.kind = Kind::kInt;
  out.integer = std::move(e);
  out.hint = hint;
  return out;
}

SymValue shape_arg_from_ivalue(const c10::IValue& v) {
  if (v.isInt()) return SymValue::of_int(Expr::integer(v.toInt()));
  if (v.isDouble()) return SymValue::of_float(v.toDouble());
  if (v.isBool()) return SymValue::of_bool(v.toBool());
  if (v.isString()) return SymValue::of_string(v.toStringRef());
  if (v.isTensor()) return SymValue::int_list(integers(v.toTensor().sizes()));
  if (is_sequence(v)) {
    std::vector<SymValue> items;
    for (const c10::IValue& item : sequence_elements(v)) {
      items.push_back(shape_arg_from_ivalue(item));
    }
    return SymValue::list(std::move(items));
  }
  return SymValue::none();
}

class Propagator {
 public:
  Propagator(GraphModule& gm, const sym::Bindings& hints)
      : gm_(gm), guards_(hints) {}

  SymbolicShapes run(const std::vector<SymbolicInput>& inputs);

 private:
  [[noreturn]] void fail(const Node& n, const std::string& what) const {
    throw FxError(cat("symbolic shape propagation: node '", n.name(), "' (",
                      n.target(), "): ", what));
  }
  const SymbolicValue& value(const Node& n) const { return values_.at(&n); }
  SymbolicValue placeholder(const Node& n, const SymbolicInput& in);
  SymbolicValue compute(const Node& n);
  std::optional<SymbolicValue> size_query(const Node& n);
  std::optional<SymbolicValue> int_operator(const Node& n);
  std::optional<SymbolicValue> tensor_getitem(const Node& n);
  std::optional<SymbolicValue> aten_call(const Node& n);
  SymbolicValue captured_call(const Node& n);
  SymbolicValue from_shape_result(const Node& n, const SymValue& r,
                                  const c10::IValue& hint);
  void restride_views(const Node& n, SymbolicValue& out) const;
  bool has_symbolic_inputs(const Node& n) const;
  // An argument structure's value (the output node's): nodes' values in
  // its lists and tuples.
  SymbolicValue argument_value(const Argument& a,
                               const c10::IValue& hint) const;
  // An argument's value for a shape function / as a symbolic int.
  SymValue shape_arg(const Argument& a) const;
  std::optional<Expr> int_arg(const Argument& a) const;
  c10::IValue hint_arg(const Argument& a) const;

  GraphModule& gm_;
  sym::GuardRecorder guards_;
  std::unordered_map<const Node*, c10::IValue> hint_values_;
  std::unordered_map<const Node*, SymbolicValue> values_;
};

SymbolicShapes Propagator::run(const std::vector<SymbolicInput>& inputs) {
  std::vector<c10::IValue> examples;
  for (const SymbolicInput& in : inputs) examples.push_back(in.example);
  run_and_report(
      gm_, examples, ExecutionMode::kMeta,
      [&](const Node& n, const c10::IValue& v) { hint_values_[&n] = v; });
  size_t next_input = 0;
  for (const Node* n : gm_.graph().nodes()) {
    if (n->op() == Opcode::kPlaceholder && next_input < inputs.size()) {
      values_[n] = placeholder(*n, inputs[next_input++]);
    } else {
      values_[n] = compute(*n);
    }
  }
  SymbolicShapes out;
  out.values = std::move(values_);
  out.hints = guards_.hints();
  out.guards = guards_.guards();
  return out;
}

SymbolicValue Propagator::placeholder(const Node& n, const SymbolicInput& in) {
  const c10::IValue& hint = hint_values_.at(&n);
  if (in.sizes.empty() || !hint.isTensor()) return concrete(hint);
  c10::IntArrayRef actual = hint.toTensor().sizes();
  if (in.sizes.size() != actual.size()) {
    fail(n, cat("declared ", in.sizes.size(), " sizes for a tensor of rank ",
                actual.size()));
  }
  for (size_t d = 0; d < actual.size(); ++d) {
    int64_t at_hint = guards_.hint(in.sizes[d]);
    if (at_hint != actual[d]) {
      fail(n, cat("dimension ", d, ": ", in.sizes[d].str(), " is ", at_hint,
                  " at the hints but the example's size is ", actual[d]));
    }
  }
  SymbolicValue out = tensor_value(in.sizes, hint);
  if (in.strides.size() == actual.size()) {
    bool same = true;
    for (size_t d = 0; d < actual.size(); ++d) {
      same = same && guards_.hint(in.strides[d]) ==
                         hint.toTensor().stride(static_cast<int64_t>(d));
    }
    if (same) out.strides = in.strides;
  }
  return out;
}

bool Propagator::has_symbolic_inputs(const Node& n) const {
  bool symbolic = false;
  auto visit = [&](const Argument& a) {
    for_each_node(a, [&](Node* input) {
      symbolic = symbolic || value(*input).has_symbols();
    });
  };
  for (const Argument& a : n.args()) visit(a);
  for (const auto& [name, a] : n.kwargs()) visit(a);
  return symbolic;
}

SymbolicValue Propagator::compute(const Node& n) {
  const c10::IValue& hint = hint_values_.at(&n);
  if (n.op() == Opcode::kOutput && !n.args().empty()) {
    return argument_value(n.args()[0], hint);
  }
  if (!has_symbolic_inputs(n)) return concrete(hint);
  if (auto v = size_query(n)) return *v;
  if (auto v = int_operator(n)) return *v;
  if (auto v = tensor_getitem(n)) return *v;
  if (auto v = aten_call(n)) return *v;
  return captured_call(n);
}

// Any other call, through the registered capture.
SymbolicValue Propagator::captured_call(const Node& n) {
  const SymbolicCallCapture& capture = symbolic_call_capture();
  bool call = n.op() == Opcode::kCallFunction ||
              n.op() == Opcode::kCallMethod || n.op() == Opcode::kCallModule;
  if (!call || !capture) fail(n, "no symbolic shape rule for this target");
  try {
    return capture(gm_, n, values_, hint_values_.at(&n), guards_);
  } catch (const c10::Error& e) {
    fail(n, cat("capturing its call: ", e.what_without_backtrace()));
  } catch (const std::exception& e) {
    fail(n, cat("capturing its call: ", e.what()));
  }
}

SymbolicValue Propagator::argument_value(const Argument& a,
                                         const c10::IValue& hint) const {
  if (a.is_node()) return value(*a.as_node());
  if (!a.is_sequence() || !is_sequence(hint)) return concrete(hint);
  std::vector<c10::IValue> hints = sequence_elements(hint);
  if (hints.size() != a.elements().size()) return concrete(hint);
  SymbolicValue out = concrete(hint);
  for (size_t i = 0; i < hints.size(); ++i) {
    out.items[i] = argument_value(a.elements()[i], hints[i]);
  }
  return out;
}

std::optional<Expr> Propagator::int_arg(const Argument& a) const {
  if (a.is_int()) return Expr::integer(a.as_int());
  if (a.is_bool()) return Expr::integer(a.as_bool() ? 1 : 0);
  if (!a.is_node()) return std::nullopt;
  const SymbolicValue& v = value(*a.as_node());
  if (v.kind != Kind::kInt) return std::nullopt;
  return v.integer;
}

c10::IValue Propagator::hint_arg(const Argument& a) const {
  if (a.is_node()) return hint_values_.at(a.as_node());
  if (a.is_sequence()) {
    std::vector<c10::IValue> items;
    for (const Argument& e : a.elements()) items.push_back(hint_arg(e));
    return a.is_list() ? make_list(std::move(items))
                       : make_tuple(std::move(items));
  }
  return constant_value(a);
}

SymValue Propagator::shape_arg(const Argument& a) const {
  if (a.is_sequence()) {
    std::vector<SymValue> items;
    for (const Argument& e : a.elements()) items.push_back(shape_arg(e));
    return SymValue::list(std::move(items));
  }
  if (!a.is_node()) return shape_arg_from_ivalue(constant_value(a));
  const SymbolicValue& v = value(*a.as_node());
  switch (v.kind) {
    case Kind::kTensor:
      return SymValue::int_list(v.sizes);
    case Kind::kInt:
      return SymValue::of_int(v.integer);
    default:
      return shape_arg_from_ivalue(v.hint);
  }
}

// torch.ops.aten.sym_size / sym_numel / sym_stride; Tensor.size(), .dim(),
// .numel(); getattr(x, "shape").
std::optional<SymbolicValue> Propagator::size_query(const Node& n) {
  const std::string& t = n.target();
  bool function = n.op() == Opcode::kCallFunction;
  bool method = n.op() == Opcode::kCallMethod;
  auto is = [&](std::string_view aten, std::string_view m) {
    return (function && (t == cat("torch.ops.aten.", aten) ||
                         t == cat("torch.ops.aten.", aten, ".default") ||
                         t == cat("torch.ops.aten.", aten, ".int"))) ||
           (method && t == m);
  };
  bool getattr_shape = function && t == "builtins.getattr" &&
                       n.args().size() == 2 && n.args()[1].is_string() &&
                       n.args()[1].as_string() == "shape";
  bool size = is("sym_size", "size") || getattr_shape;
  bool stride = is("sym_stride", "stride");
  bool numel = is("sym_numel", "numel");
  if (!size && !stride && !numel) return std::nullopt;
  if (n.args().empty() || !n.args()[0].is_node()) return std::nullopt;
  const SymbolicValue& x = value(*n.args()[0].as_node());
  if (x.kind != Kind::kTensor) return std::nullopt;
  const c10::IValue& hint = hint_values_.at(&n);
  if (numel) {
    Expr product = Expr::integer(1);
    for (const Expr& s : x.sizes) product = product * s;
    return int_value(product, hint);
  }
  const std::vector<Expr>& of = size ? x.sizes : x.strides;
  if (of.empty()) fail(n, "the strides of its input are not known");
  if (n.args().size() < 2 || getattr_shape) {
    SymbolicValue all = concrete(hint);
    all.items.clear();
    for (const Expr& e : of) all.items.push_back(int_value(e, c10::IValue()));
    return all;
  }
  std::optional<Expr> dim = int_arg(n.args()[1]);
  if (!dim || !dim->as_integer()) fail(n, "the dimension is not an integer");
  int64_t d = *dim->as_integer(), rank = static_cast<int64_t>(of.size());
  if (d < -rank || d >= rank) fail(n, cat("dimension ", d, " out of range"));
  return int_value(of[d < 0 ? d + rank : d], hint);
}

// operator.* on symbolic ints, and operator.getitem on sequences.
std::optional<SymbolicValue> Propagator::int_operator(const Node& n) {
  if (n.op() != Opcode::kCallFunction) return std::nullopt;
  const std::string& t = n.target();
  if (t.rfind("operator.", 0) != 0) return std::nullopt;
  std::string op = t.substr(9);
  const c10::IValue& hint = hint_values_.at(&n);
  if (op == "getitem" && n.args().size() == 2 && n.args()[0].is_node()) {
    const SymbolicValue& seq = value(*n.args()[0].as_node());
    std::optional<Expr> i = int_arg(n.args()[1]);
    if (seq.kind != Kind::kSequence || !i || !i->as_integer()) {
      return std::nullopt;
    }
    int64_t k = *i->as_integer(), len = static_cast<int64_t>(seq.items.size());
    if (k < -len || k >= len) fail(n, cat("index ", k, " out of range"));
    SymbolicValue item = seq.items[k < 0 ? k + len : k];
    item.hint = hint;
    return item;
  }
  std::vector<Expr> operands;
  for (const Argument& a : n.args()) {
    std::optional<Expr> e = int_arg(a);
    if (!e) return std::nullopt;
    operands.push_back(*e);
  }
  if (operands.size() == 1) {
    if (op == "neg") return int_value(-operands[0], hint);
    if (op == "pos") return int_value(operands[0], hint);
    return std::nullopt;
  }
  if (operands.size() != 2) return std::nullopt;
  const Expr &a = operands[0], &b = operands[1];
  if (op == "add") return int_value(a + b, hint);
  if (op == "sub") return int_value(a - b, hint);
  if (op == "mul") return int_value(a * b, hint);
  if (op == "floordiv") return int_value(sym::floordiv(a, b), hint);
  if (op == "mod") return int_value(sym::mod(a, b), hint);
  using Op = sym::Relation::Op;
  static const std::pair<const char*, Op> kRelations[] = {
      {"eq", Op::kEq}, {"ne", Op::kNe}, {"lt", Op::kLt},
      {"le", Op::kLe}, {"gt", Op::kGt}, {"ge", Op::kGe}};
  for (const auto& [name, rel] : kRelations) {
    if (op == name) {
      guards_.decide(sym::Relation{rel, a, b});
      return concrete(hint);
    }
  }
  return std::nullopt;
}

// operator.getitem on a tensor, decomposed as Tensor.__getitem__ is
// (symbolic_indexing.h); an index that reads tensor data is left to the
// capture.
std::optional<SymbolicValue> Propagator::tensor_getitem(const Node& n) {
  if (n.op() != Opcode::kCallFunction || n.target() != "operator.getitem" ||
      n.args().size() != 2 || !n.args()[0].is_node()) {
    return std::nullopt;
  }
  const SymbolicValue& self = value(*n.args()[0].as_node());
  if (self.kind != Kind::kTensor) return std::nullopt;
  std::optional<SymbolicIndexing> result;
  try {
    result = symbolic_getitem(
        self.sizes, self.strides, n.args()[1],
        [this](const Node& m) -> const SymbolicValue& { return value(m); },
        guards_);
  } catch (const FxError& e) {
    fail(n, cat("indexing: ", e.what()));
  } catch (const c10::Error& e) {
    fail(n, cat("indexing: ", e.what_without_backtrace()));
  }
  if (!result) return std::nullopt;
  SymbolicValue out = from_shape_result(n, SymValue::int_list(result->sizes),
                                        hint_values_.at(&n));
  if (!result->strides.empty()) {
    // A view's strides are self's (the value at the hints may be a copy).
    out.strides = std::move(result->strides);
  } else {
    restride_views(n, out);
  }
  return out;
}

// A call of an ATen operator through its shape function.
std::optional<SymbolicValue> Propagator::aten_call(const Node& n) {
  std::optional<AtenTarget> target = aten_target(n.op(), n.target());
  std::shared_ptr<const AtenOp> op = target ? AtenOp::find(*target) : nullptr;
  if (!op) return std::nullopt;
  std::vector<c10::IValue> args;
  for (const Argument& a : n.args()) args.push_back(hint_arg(a));
  AtenOp::Kwargs kwargs;
  for (const auto& [name, a] : n.kwargs())
    kwargs.emplace_back(name, hint_arg(a));
  std::optional<AtenOp::Binding> b = op->bind(args, kwargs);
  if (!b) fail(n, "no overload of the operator accepts the call");
  const c10::FunctionSchema& schema = b->overload->op->schema();
  std::shared_ptr<const torch::jit::Graph> graph = shape_graph_for(schema);
  if (!graph) {
    fail(n, cat("no symbolic shape rule for ", schema.name(),
                schema.overload_name().empty() ? "" : ".",
                schema.overload_name()));
  }
  std::vector<SymValue> inputs;
  using Source = AtenOp::ParamSource::Kind;
  const auto& params = b->overload->params;
  for (size_t p = 0; p < params.size(); ++p) {
    const AtenOp::ParamSource& s = b->sources[p];
    SymValue v;
    if (s.kind == Source::kPositional) {
      v = shape_arg(n.args()[s.index]);
    } else if (s.kind == Source::kKeyword) {
      v = shape_arg(n.kwargs()[s.index].second);
    } else if (s.kind == Source::kGathered) {
      std::vector<SymValue> ints;
      for (size_t i = s.index; i < n.args().size(); ++i) {
        ints.push_back(shape_arg(n.args()[i]));
      }
      v = SymValue::list(std::move(ints));
    } else if (params[p].default_value) {
      v = shape_arg_from_ivalue(*params[p].default_value);
    }
    if (params[p].type == AtenType::kIntList &&
        v.kind == SymValue::Kind::kInt) {
      // Python's parser: an int for `int[N]` is N of it (mean(x, 1)).
      v = SymValue::list(std::vector<SymValue>(
          static_cast<size_t>(std::max(params[p].size, 1)), v));
    }
    if (params[p].type == AtenType::kTensor &&
        v.kind != SymValue::Kind::kList && !v.is_none()) {
      v = SymValue::list({});  // a number where a Tensor goes: 0-dim
    }
    inputs.push_back(std::move(v));
  }
  std::string name = cat(schema.name(), ".", schema.overload_name());
  std::vector<SymValue> result;
  try {
    result = evaluate_shape_graph(*graph, std::move(inputs), guards_, name);
  } catch (const FxError& e) {
    fail(n, e.what());
  }
  // Several results come as several graph outputs (max_pool2d_with_indices)
  // or as one tuple.
  SymValue shapes =
      result.size() == 1 ? result[0] : SymValue::tuple(std::move(result));
  SymbolicValue out = from_shape_result(n, shapes, hint_values_.at(&n));
  restride_views(n, out);
  return out;
}

void Propagator::restride_views(const Node& n, SymbolicValue& out) const {
  if (out.kind == Kind::kSequence) {
    for (SymbolicValue& item : out.items) restride_views(n, item);
    return;
  }
  if (out.kind != Kind::kTensor || !out.has_symbols()) return;
  const at::Tensor& t = out.hint.toTensor();
  std::vector<const std::vector<Expr>*> bases;
  auto visit = [&](const Argument& a) {
    for_each_node(a, [&](Node* input) {
      const SymbolicValue& v = value(*input);
      if (v.kind == Kind::kTensor && v.hint.toTensor().is_alias_of(t)) {
        bases.push_back(&v.strides);
      }
    });
  };
  for (const Argument& a : n.args()) visit(a);
  for (const auto& [name, a] : n.kwargs()) visit(a);
  if (!bases.empty()) {
    out.strides = view_strides(out.sizes, t, bases, guards_,
                               /*hint_fallback=*/false);
  }
}

// The shape function's result laid over the kernel's value at the hints.
SymbolicValue Propagator::from_shape_result(const Node& n, const SymValue& r,
                                            const c10::IValue& hint) {
  if (hint.isTensor()) {
    std::vector<Expr> sizes;
    if (r.kind == SymValue::Kind::kList) {
      for (const SymValue& s : *r.items) {
        if (s.kind != SymValue::Kind::kInt) break;
        sizes.push_back(s.integer);
      }
    }
    c10::IntArrayRef actual = hint.toTensor().sizes();
    bool same = sizes.size() == actual.size();
    for (size_t d = 0; same && d < sizes.size(); ++d) {
      same = guards_.hint(sizes[d]) == actual[d];
    }
    if (!same) {
      fail(n, cat("the shape function gives ", r.str(),
                  " but the kernel's result at the hints has sizes ",
                  c10::str(actual)));
    }
    return tensor_value(std::move(sizes), hint);
  }
  if (!is_sequence(hint)) return concrete(hint);
  std::vector<c10::IValue> items = sequence_elements(hint);
  bool fits =
      (r.kind == SymValue::Kind::kList || r.kind == SymValue::Kind::kTuple) &&
      r.items->size() == items.size();
  if (!fits) {
    fail(n, cat("the shape function gives ", r.str(), " for ", items.size(),
                " results"));
  }
  SymbolicValue out = concrete(hint);
  for (size_t i = 0; i < items.size(); ++i) {
    out.items[i] = from_shape_result(n, (*r.items)[i], items[i]);
  }
  return out;
}

}  // namespace

SymbolicShapes propagate_symbolic_shapes(
    GraphModule& gm, const std::vector<SymbolicInput>& inputs,
    const sym::Bindings& hints) {
  return Propagator(gm, hints).run(inputs);
}

}  // namespace fx
