#include "fx_core/runtime/symbolic/symbolic_indexing.h"

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <string>
#include <utility>

#include "fx_core/runtime/symbolic/shape_functions.h"
#include "fx_core/runtime/symbolic/shape_graph_eval.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

using sym::Expr;
using ValueKind = SymbolicValue::Kind;

// One index of a tuple, as applySlicing takes it.
struct Index {
  enum class Kind { kInt, kSlice, kNone, kEllipsis, kBool, kTensor };
  Kind kind = Kind::kNone;
  Expr integer;                           // kInt
  std::optional<Expr> start, stop, step;  // kSlice; std::nullopt: None
  bool boolean = false;                   // kBool
  std::vector<Expr> sizes;                // kTensor: the index's sizes
};

// ------------------------------------------------------------ shape rules

// The sizes the shape function of `name.overload` gives for `args`.
std::vector<Expr> shape_rule(const char* name, const char* overload,
                             std::vector<SymValue> args,
                             sym::GuardRecorder& guards) {
  const c10::FunctionSchema& schema =
      c10::Dispatcher::singleton().findSchemaOrThrow(name, overload).schema();
  std::string op = cat(name, ".", overload);
  std::shared_ptr<const torch::jit::Graph> graph = shape_graph_for(schema);
  if (!graph) throw FxError(cat("no symbolic shape rule for ", op));
  std::vector<SymValue> out =
      evaluate_shape_graph(*graph, std::move(args), guards, op);
  std::vector<Expr> sizes;
  if (out.size() == 1 && out[0].kind == SymValue::Kind::kList) {
    for (const SymValue& s : *out[0].items) {
      if (s.kind != SymValue::Kind::kInt) break;
      sizes.push_back(s.integer);
    }
    if (sizes.size() == out[0].items->size()) return sizes;
  }
  throw FxError(cat("the shape rule of ", op, " gave no sizes"));
}

SymValue int_of(int64_t i) { return SymValue::of_int(Expr::integer(i)); }

std::vector<Expr> select(const std::vector<Expr>& self, int64_t dim,
                         const Expr& index, sym::GuardRecorder& guards) {
  return shape_rule(
      "aten::select", "int",
      {SymValue::int_list(self), int_of(dim), SymValue::of_int(index)}, guards);
}

// aten::slice.Tensor's sizes, its bounds clamped as ATen's rule clamps
// them (torch/_decomp's slice_forward, which make_fx 1.13 runs on symbolic
// sizes; the TorchScript rule is the same but for a guard comparing a
// symbolic start with INT64_MAX). A slice to None ends at the size, where
// ATen clamps INT64_MAX to, without a guard comparing the two.
std::vector<Expr> slice(std::vector<Expr> self, int64_t dim, const Index& s,
                        sym::GuardRecorder& guards) {
  if (dim >= static_cast<int64_t>(self.size())) {
    throw FxError(
        cat("too many indices for tensor of dimension ", self.size()));
  }
  using Op = sym::Relation::Op;
  auto holds = [&](Op op, const Expr& a, const Expr& b) {
    return guards.decide(sym::Relation{op, a, b});
  };
  const Expr zero = Expr::integer(0), size = self[dim];
  const Expr step = s.step.value_or(Expr::integer(1));
  if (!holds(Op::kGt, step, zero)) {
    throw FxError("slice step must be positive");
  }
  Expr start = s.start.value_or(zero), end = s.stop.value_or(size);
  if (holds(Op::kLt, start, zero)) start = start + size;
  if (holds(Op::kLt, end, zero)) end = end + size;
  if (holds(Op::kLt, start, zero)) {
    start = zero;
  } else if (holds(Op::kGe, start, size)) {
    start = size;
  }
  if (holds(Op::kLt, end, start)) {
    end = start;
  } else if (holds(Op::kGe, end, size)) {
    end = size;
  }
  self[dim] = sym::floordiv(end - start + step - Expr::integer(1), step);
  return self;
}

std::vector<Expr> unsqueeze(const std::vector<Expr>& self, int64_t dim,
                            sym::GuardRecorder& guards) {
  return shape_rule("aten::unsqueeze", "",
                    {SymValue::int_list(self), int_of(dim)}, guards);
}

// Two index shapes broadcast as add.Tensor's rule broadcasts them.
std::vector<Expr> broadcast(const std::vector<Expr>& a,
                            const std::vector<Expr>& b,
                            sym::GuardRecorder& guards) {
  return shape_rule("aten::add", "Tensor",
                    {SymValue::int_list(a), SymValue::int_list(b), int_of(1)},
                    guards);
}

// aten::index.Tensor's sizes (torch/_meta_registrations.py,
// meta_index_Tensor) for integer indices, one per dimension or none.
std::vector<Expr> index_tensor(
    const std::vector<Expr>& self,
    const std::vector<std::optional<std::vector<Expr>>>& indices,
    sym::GuardRecorder& guards) {
  if (indices.size() > self.size()) {
    throw FxError(cat("too many indices for tensor of dimension ", self.size(),
                      " (got ", indices.size(), ")"));
  }
  std::optional<std::vector<Expr>> replacement;
  size_t first = indices.size(), last = 0;
  for (size_t d = 0; d < indices.size(); ++d) {
    if (!indices[d]) continue;
    replacement = replacement ? broadcast(*replacement, *indices[d], guards)
                              : *indices[d];
    first = std::min(first, d);
    last = d;
  }
  bool adjacent = true;
  for (size_t d = first; d < last; ++d) adjacent = adjacent && indices[d];
  std::vector<Expr> before, after;
  for (size_t d = 0; d < self.size(); ++d) {
    if (d < indices.size() && indices[d]) continue;
    (adjacent && d < first ? before : after).push_back(self[d]);
  }
  before.insert(before.end(), replacement->begin(), replacement->end());
  before.insert(before.end(), after.begin(), after.end());
  return before;
}

// ----------------------------------------------------------- the index

// A node's int (a symbolic int, or a concrete one), or std::nullopt.
std::optional<Expr> node_int(const SymbolicValue& v) {
  if (v.kind == ValueKind::kInt) return v.integer;
  if (v.kind == ValueKind::kOther && v.hint.isBool()) {
    return Expr::integer(v.hint.toBool() ? 1 : 0);
  }
  return std::nullopt;
}

// A slice bound or step: None, an int or a node's int. std::nullopt (the
// outer) for a bound read from a tensor.
std::optional<std::optional<Expr>> slice_part(const Argument& a,
                                              const SymbolicValueOf& value_of) {
  if (a.is_none()) return std::optional<Expr>();
  if (a.is_int()) return std::optional<Expr>(Expr::integer(a.as_int()));
  if (a.is_bool())
    return std::optional<Expr>(Expr::integer(a.as_bool() ? 1 : 0));
  if (a.is_node()) {
    if (std::optional<Expr> e = node_int(value_of(*a.as_node()))) {
      return std::optional<Expr>(*e);
    }
    return std::nullopt;
  }
  throw FxError("slice indices must be integers or None");
}

// A list or tuple of ints (constants or nodes' ints) inside an index: an
// index tensor of its length. std::nullopt for anything else.
std::optional<Index> int_sequence(const Argument& a,
                                  const SymbolicValueOf& value_of) {
  for (const Argument& e : a.elements()) {
    bool is_int = e.is_int() || (e.is_node() && value_of(*e.as_node()).kind ==
                                                    ValueKind::kInt);
    if (!is_int) return std::nullopt;
  }
  Index out;
  out.kind = Index::Kind::kTensor;
  out.sizes = {Expr::integer(static_cast<int64_t>(a.elements().size()))};
  return out;
}

// A tensor node as an index: an integer tensor's sizes. std::nullopt for a
// mask or a 0-dim tensor, which read the tensor's values.
std::optional<Index> tensor_index(const SymbolicValue& v) {
  const at::Tensor& t = v.hint.toTensor();
  at::ScalarType type = t.scalar_type();
  if (type == at::kBool || type == at::kByte || v.sizes.empty()) {
    return std::nullopt;
  }
  if (!at::isIntegralType(type, /*includeBool=*/false)) {
    throw FxError(
        "tensors used as indices must be long, int, byte or bool tensors");
  }
  Index out;
  out.kind = Index::Kind::kTensor;
  out.sizes = v.sizes;
  return out;
}

std::optional<Index> node_index(const Node& node,
                                const SymbolicValueOf& value_of) {
  const SymbolicValue& v = value_of(node);
  if (v.kind == ValueKind::kTensor) return tensor_index(v);
  Index out;
  if (v.kind == ValueKind::kInt) {
    out.kind = Index::Kind::kInt;
    out.integer = v.integer;
    return out;
  }
  if (v.kind == ValueKind::kOther && v.hint.isNone()) return out;  // kNone
  if (v.kind == ValueKind::kOther && v.hint.isBool()) {
    out.kind = Index::Kind::kBool;
    out.boolean = v.hint.toBool();
    return out;
  }
  return std::nullopt;
}

std::optional<Index> one_index(const Argument& a,
                               const SymbolicValueOf& value_of) {
  Index out;
  if (a.is_none()) return out;
  if (a.is_ellipsis()) {
    out.kind = Index::Kind::kEllipsis;
  } else if (a.is_bool()) {
    out.kind = Index::Kind::kBool;
    out.boolean = a.as_bool();
  } else if (a.is_int()) {
    out.kind = Index::Kind::kInt;
    out.integer = Expr::integer(a.as_int());
  } else if (a.is_slice()) {
    out.kind = Index::Kind::kSlice;
    auto start = slice_part(a.elements()[0], value_of);
    auto stop = slice_part(a.elements()[1], value_of);
    auto step = slice_part(a.elements()[2], value_of);
    if (!start || !stop || !step) return std::nullopt;
    out.start = *start;
    out.stop = *stop;
    out.step = *step;
  } else if (a.is_node()) {
    return node_index(*a.as_node(), value_of);
  } else if (a.is_sequence()) {
    return int_sequence(a, value_of);
  } else {
    throw FxError(
        "only integers, slices (`:`), ellipsis (`...`), None and long or "
        "byte Variables are valid indices");
  }
  return out;
}

// Python's treatSequenceAsTuple for a list index.
bool list_as_tuple(const Argument& index, const SymbolicValueOf& value_of) {
  if (!index.is_list() || index.elements().size() >= 32) return false;
  return std::any_of(
      index.elements().begin(), index.elements().end(), [&](const Argument& e) {
        if (e.is_node()) {
          const SymbolicValue& v = value_of(*e.as_node());
          return v.kind == ValueKind::kTensor ||
                 v.kind == ValueKind::kSequence ||
                 (v.kind == ValueKind::kOther && v.hint.isNone());
        }
        return e.is_slice() || e.is_ellipsis() || e.is_none() ||
               e.is_sequence();
      });
}

std::optional<std::vector<Index>> parse(const Argument& index,
                                        const SymbolicValueOf& value_of) {
  std::vector<Argument> parts;
  if (index.is_tuple() || list_as_tuple(index, value_of)) {
    parts = index.elements();
  } else {
    parts = {index};
  }
  std::vector<Index> out;
  for (const Argument& part : parts) {
    std::optional<Index> i = one_index(part, value_of);
    if (!i) return std::nullopt;
    out.push_back(std::move(*i));
  }
  return out;
}

// --------------------------------------------------------- applySlicing

// The dimensions the indices take (count_specified_dimensions).
int64_t specified_dims(const std::vector<Index>& indices) {
  int64_t n = 0;
  for (const Index& i : indices) {
    n += i.kind == Index::Kind::kInt || i.kind == Index::Kind::kSlice ||
         i.kind == Index::Kind::kTensor;
  }
  return n;
}

// The strides of the views indexing makes (when `self`'s are known), as
// ATen's view kernels compute them.
void select_strides(std::vector<Expr>& strides, int64_t dim) {
  if (!strides.empty()) strides.erase(strides.begin() + dim);
}

void slice_strides(std::vector<Expr>& strides, int64_t dim, const Index& s) {
  if (!strides.empty()) {
    strides[dim] = strides[dim] * s.step.value_or(Expr::integer(1));
  }
}

// inferUnsqueezeGeometry: the new dimension's stride is the size times the
// stride of the one it goes before (1 at the end).
void unsqueeze_strides(std::vector<Expr>& strides,
                       const std::vector<Expr>& sizes, int64_t dim) {
  if (strides.empty()) return;
  const size_t d = static_cast<size_t>(dim);
  Expr stride = d < sizes.size() ? sizes[d] * strides[d] : Expr::integer(1);
  strides.insert(strides.begin() + dim, stride);
}

SymbolicIndexing apply(const std::vector<Expr>& self_sizes,
                       const std::vector<Expr>& self_strides,
                       const std::vector<Index>& indices,
                       sym::GuardRecorder& guards) {
  const int64_t rank = static_cast<int64_t>(self_sizes.size());
  const int64_t specified = specified_dims(indices);
  if (specified > rank) {
    throw FxError(cat("too many indices for tensor of dimension ", rank));
  }
  SymbolicIndexing out{self_sizes, self_strides};
  std::vector<Expr>& sizes = out.sizes;
  std::vector<Expr>& strides = out.strides;
  std::vector<std::optional<std::vector<Expr>>> tensors;  // outIndices
  auto record = [&](int64_t& dim, std::vector<Expr> index_sizes) {
    tensors.resize(static_cast<size_t>(dim) + 1);
    tensors[static_cast<size_t>(dim)] = std::move(index_sizes);
    ++dim;
  };
  int64_t dim = 0;
  for (const Index& i : indices) {
    switch (i.kind) {
      case Index::Kind::kInt:
        sizes = select(sizes, dim, i.integer, guards);
        select_strides(strides, dim);
        break;
      case Index::Kind::kSlice:
        sizes = slice(sizes, dim, i, guards);
        slice_strides(strides, dim, i);
        ++dim;
        break;
      case Index::Kind::kEllipsis:
        dim += rank - specified;
        break;
      case Index::Kind::kNone:
        unsqueeze_strides(strides, sizes, dim);
        sizes = unsqueeze(sizes, dim, guards);
        ++dim;
        break;
      case Index::Kind::kBool:
        unsqueeze_strides(strides, sizes, dim);
        sizes = unsqueeze(sizes, dim, guards);
        record(dim, {Expr::integer(i.boolean ? 1 : 0)});
        break;
      case Index::Kind::kTensor:
        record(dim, i.sizes);
        break;
    }
  }
  if (!tensors.empty()) {
    // index.Tensor: a new tensor.
    out.sizes = index_tensor(sizes, tensors, guards);
    out.strides.clear();
  }
  return out;
}

}  // namespace

std::optional<SymbolicIndexing> symbolic_getitem(
    const std::vector<Expr>& sizes, const std::vector<Expr>& strides,
    const Argument& index, const SymbolicValueOf& value_of,
    sym::GuardRecorder& guards) {
  std::optional<std::vector<Index>> indices = parse(index, value_of);
  if (!indices) return std::nullopt;
  if (!strides.empty() && strides.size() != sizes.size()) {
    throw FxError("the indexed tensor's strides do not match its sizes");
  }
  return apply(sizes, strides, *indices, guards);
}

}  // namespace fx
