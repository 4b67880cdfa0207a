// Built-in ops, part 1: Python's `operator` module, `builtins.getattr` and
// `builtins.len`, and `math`, with Python's semantics on numbers, sequences
// and tensors (operator.add on two ints is an int, on tuples a
// concatenation, on tensors torch's add with type promotion).
#include <ATen/ATen.h>
#include <ATen/core/class_type.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <optional>
#include <stdexcept>

#include "fx_core/runtime/ops/builtin_ops.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx::ops {
namespace {

using c10::IValue;

// A Python number as a tensor that promotes like one (a "wrapped number").
at::Tensor wrap_number(const IValue& v) {
  at::Tensor t = v.isDouble() ? at::scalar_tensor(v.toDouble(), at::kDouble)
                 : v.isBool() ? at::scalar_tensor(v.toBool(), at::kBool)
                              : at::scalar_tensor(v.toInt(), at::kLong);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

bool is_number(const IValue& v) {
  return v.isInt() || v.isDouble() || v.isBool();
}

double as_double(const IValue& v) {
  return v.isDouble() ? v.toDouble()
         : v.isBool() ? (v.toBool() ? 1.0 : 0.0)
                      : static_cast<double>(v.toInt());
}
int64_t as_int(const IValue& v) {
  return v.isBool() ? (v.toBool() ? 1 : 0) : v.toInt();
}

[[noreturn]] void unsupported(std::string_view op, const IValue& a,
                              const IValue& b) {
  throw FxError(cat("unsupported operand type(s) for ", op, ": '",
                    value_type_name(a), "' and '", value_type_name(b), "'"));
}

int64_t py_floordiv(int64_t a, int64_t b) {
  if (b == 0) throw FxError("integer division or modulo by zero");
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t py_mod(int64_t a, int64_t b) { return a - py_floordiv(a, b) * b; }

// CPython's _float_div_mod: x // y and x % y on floats (1 // 0.1 == 9.0, not
// floor(1 / 0.1) == 10.0).
void py_float_divmod(double x, double y, double* floordiv, double* mod) {
  *mod = std::fmod(x, y);
  double div = (x - *mod) / y;
  if (*mod != 0) {
    if ((y < 0) != (*mod < 0)) {
      *mod += y;
      div -= 1.0;
    }
  } else {
    *mod = std::copysign(0.0, y);
  }
  if (div != 0) {
    *floordiv = std::floor(div);
    if (div - *floordiv > 0.5) *floordiv += 1.0;
  } else {
    *floordiv = std::copysign(0.0, x / y);
  }
}

enum class Binary {
  kAdd,
  kSub,
  kMul,
  kTrueDiv,
  kFloorDiv,
  kMod,
  kPow,
  kMatMul,
  kAnd,
  kOr,
  kXor,
  kLShift,
  kRShift,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
};

at::Tensor tensor_binary(Binary op, const at::Tensor& a, const at::Tensor& b) {
  switch (op) {
    case Binary::kAdd:
      return at::add(a, b);
    case Binary::kSub:
      return at::sub(a, b);
    case Binary::kMul:
      return at::mul(a, b);
    case Binary::kTrueDiv:
      return at::div(a, b);
    case Binary::kFloorDiv:
      return at::div(a, b, "floor");
    case Binary::kMod:
      return at::remainder(a, b);
    case Binary::kPow:
      return at::pow(a, b);
    case Binary::kMatMul:
      return at::matmul(a, b);
    case Binary::kAnd:
      return at::bitwise_and(a, b);
    case Binary::kOr:
      return at::bitwise_or(a, b);
    case Binary::kXor:
      return at::bitwise_xor(a, b);
    case Binary::kLShift:
      return at::bitwise_left_shift(a, b);
    case Binary::kRShift:
      return at::bitwise_right_shift(a, b);
    case Binary::kEq:
      return at::eq(a, b);
    case Binary::kNe:
      return at::ne(a, b);
    case Binary::kLt:
      return at::lt(a, b);
    case Binary::kLe:
      return at::le(a, b);
    case Binary::kGt:
      return at::gt(a, b);
    case Binary::kGe:
      return at::ge(a, b);
  }
  throw FxError("unknown binary operator");
}

// Python's +, -, * and comparisons of two numbers of one kind (two ints or
// two floats), which int and float compute alike; nullopt for the other
// operators.
template <typename T>
std::optional<IValue> same_kind_binary(Binary op, T x, T y) {
  switch (op) {
    case Binary::kAdd:
      return x + y;
    case Binary::kSub:
      return x - y;
    case Binary::kMul:
      return x * y;
    case Binary::kEq:
      return x == y;
    case Binary::kNe:
      return x != y;
    case Binary::kLt:
      return x < y;
    case Binary::kLe:
      return x <= y;
    case Binary::kGt:
      return x > y;
    case Binary::kGe:
      return x >= y;
    default:
      return std::nullopt;
  }
}

IValue number_binary(Binary op, std::string_view name, const IValue& a,
                     const IValue& b) {
  if (a.isBool() && b.isBool()) {
    // bool's own &, |, ^ (the others are int's).
    switch (op) {
      case Binary::kAnd:
        return a.toBool() && b.toBool();
      case Binary::kOr:
        return a.toBool() || b.toBool();
      case Binary::kXor:
        return a.toBool() != b.toBool();
      default:
        break;
    }
  }
  bool ints = !a.isDouble() && !b.isDouble();
  if (ints) {
    int64_t x = as_int(a), y = as_int(b);
    if (std::optional<IValue> r = same_kind_binary(op, x, y)) return *r;
    switch (op) {
      case Binary::kTrueDiv:
        if (y == 0) throw FxError("division by zero");
        return static_cast<double>(x) / static_cast<double>(y);
      case Binary::kFloorDiv:
        return py_floordiv(x, y);
      case Binary::kMod:
        return py_mod(x, y);
      case Binary::kPow:
        if (y < 0) {
          if (x == 0) {
            throw FxError("0.0 cannot be raised to a negative power");
          }
          return std::pow(static_cast<double>(x), y);
        }
        {
          int64_t r = 1;
          for (int64_t i = 0; i < y; ++i) r *= x;
          return r;
        }
      case Binary::kAnd:
        return x & y;
      case Binary::kOr:
        return x | y;
      case Binary::kXor:
        return x ^ y;
      case Binary::kLShift:
        return x << y;
      case Binary::kRShift:
        return x >> y;
      case Binary::kMatMul:
      default:  // + - * and the comparisons: same_kind_binary above
        break;
    }
    unsupported(name, a, b);
  }
  double x = as_double(a), y = as_double(b);
  if (std::optional<IValue> r = same_kind_binary(op, x, y)) return *r;
  switch (op) {
    case Binary::kTrueDiv:
      if (y == 0) throw FxError("float division by zero");
      return x / y;
    case Binary::kFloorDiv:
    case Binary::kMod: {
      if (y == 0) {
        throw FxError(op == Binary::kMod ? "float modulo"
                                         : "float floor division by zero");
      }
      double div, mod;
      py_float_divmod(x, y, &div, &mod);
      return op == Binary::kMod ? mod : div;
    }
    case Binary::kPow:
      if (x == 0 && y < 0) {
        throw FxError("0.0 cannot be raised to a negative power");
      }
      return std::pow(x, y);
    default:
      unsupported(name, a, b);
  }
}

// Rebuilds a sequence of the same kind as `like` (list, tuple, torch.Size:
// Python's slices, sums and repeats of a torch.Size are torch.Size).
IValue same_kind(const IValue& like, std::vector<IValue> items) {
  return like.isTuple() ? same_tuple_type(like, std::move(items))
                        : make_list(std::move(items));
}

// What Python's `*` repeats: a list, tuple, torch.Size or str.
bool is_repeatable(const IValue& v) { return is_sequence(v) || v.isString(); }

bool values_equal(const IValue& a, const IValue& b);

// Reserves room in `out` for a sequence of `count` items repeated `n` times
// (Python's `seq * n`) before any item is copied, and returns how many
// copies to append: 0 when n < 1 or the sequence is empty. A repeat too
// large for memory (a list times 2**31 - 1 is 32 GiB of values per item)
// fails at once with its size, as CPython's MemoryError, instead of growing
// for minutes first.
template <typename Sequence>
int64_t reserve_repeat(Sequence& out, size_t count, int64_t n) {
  if (n < 1 || count == 0) return 0;
  auto too_large = [&] {
    return FxError(cat("MemoryError: a sequence of length ", count,
                       " repeated ", n, " times does not fit in memory"));
  };
  const uint64_t times = static_cast<uint64_t>(n);
  const size_t item = sizeof(typename Sequence::value_type);
  if (times > std::numeric_limits<size_t>::max() / item / count) {
    throw too_large();
  }
  try {
    out.reserve(count * times);
  } catch (const std::bad_alloc&) {
    throw too_large();
  } catch (const std::length_error&) {
    throw too_large();
  }
  return n;
}

// The count of `seq * n` as Python's n.__index__() gives it: an int, a bool,
// or an integer tensor of one element; anything else is CPython's
// TypeError, naming n's type (Tensor's own message for other tensors).
int64_t repeat_count(const IValue& n) {
  if (n.isInt() || n.isBool()) return as_int(n);
  if (n.isTensor()) {
    const at::Tensor& t = n.toTensor();
    if (t.numel() != 1 ||
        !c10::isIntegralType(t.scalar_type(), /*includeBool=*/true)) {
      throw FxError(
          "only integer tensors of a single element can be converted to an "
          "index");
    }
    return t.item<int64_t>();
  }
  throw FxError(cat("can't multiply sequence by non-int of type '",
                    value_type_name(n), "'"));
}

// Python's seq * n (and n * seq) for a list, tuple, torch.Size or str.
IValue repeat_sequence(const IValue& seq, int64_t n) {
  if (seq.isString()) {
    const std::string& one = seq.toStringRef();
    std::string out;
    const int64_t times = reserve_repeat(out, one.size(), n);
    for (int64_t i = 0; i < times; ++i) out += one;
    return out;
  }
  std::vector<IValue> one = sequence_elements(seq), items;
  const int64_t times = reserve_repeat(items, one.size(), n);
  for (int64_t i = 0; i < times; ++i) {
    items.insert(items.end(), one.begin(), one.end());
  }
  return same_kind(seq, std::move(items));
}

IValue binary(Binary op, std::string_view name, const IValue& a,
              const IValue& b) {
  if (a.isTensor() && b.isTensor()) {
    return tensor_binary(op, a.toTensor(), b.toTensor());
  }
  if (a.isTensor() && is_number(b)) {
    // Tensor.__pow__ takes the Scalar overload, whose kernel differs from
    // the tensor-tensor one (x ** 2 squares exactly).
    if (op == Binary::kPow) return at::pow(a.toTensor(), b.toScalar());
    return tensor_binary(op, a.toTensor(), wrap_number(b));
  }
  if (is_number(a) && b.isTensor()) {
    // Tensor.__rtruediv__ is `self.reciprocal() * other`.
    if (op == Binary::kTrueDiv) {
      return at::mul(at::reciprocal(b.toTensor()), wrap_number(a));
    }
    return tensor_binary(op, wrap_number(a), b.toTensor());
  }
  if (is_number(a) && is_number(b)) return number_binary(op, name, a, b);
  if (op == Binary::kAdd && is_sequence(a) && is_sequence(b) &&
      a.isTuple() == b.isTuple()) {
    std::vector<IValue> items = sequence_elements(a);
    for (IValue& v : sequence_elements(b)) items.push_back(std::move(v));
    return same_kind(a, std::move(items));
  }
  if (op == Binary::kMul && (is_repeatable(a) || is_repeatable(b))) {
    // CPython tries a's repeat first: with two sequences, b is the count.
    const bool a_repeats = is_repeatable(a);
    return repeat_sequence(a_repeats ? a : b, repeat_count(a_repeats ? b : a));
  }
  if (op == Binary::kAdd && a.isString() && b.isString()) {
    return a.toStringRef() + b.toStringRef();
  }
  if (op == Binary::kEq) return values_equal(a, b);
  if (op == Binary::kNe) return !values_equal(a, b);
  unsupported(name, a, b);
}

bool values_equal(const IValue& a, const IValue& b) {
  if (is_number(a) && is_number(b)) {
    return as_double(a) == as_double(b);
  }
  if (is_sequence(a) && is_sequence(b)) {
    if (a.isTuple() != b.isTuple()) return false;
    std::vector<IValue> x = sequence_elements(a), y = sequence_elements(b);
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!values_equal(x[i], y[i])) return false;
    }
    return true;
  }
  if (a.isString() && b.isString()) return a.toStringRef() == b.toStringRef();
  if (a.isNone() || b.isNone()) return a.isNone() && b.isNone();
  if (a.isTensor() || b.isTensor()) {
    return a.isTensor() && b.isTensor() && a.toTensor().is_same(b.toTensor());
  }
  return a.tagKind() == b.tagKind() && a.hash(a) == b.hash(b);
}

// Python's index normalisation for sequences; `kind` names the sequence in
// the error ("tuple index out of range").
int64_t seq_index(int64_t i, size_t n, std::string_view kind) {
  int64_t size = static_cast<int64_t>(n);
  if (i < 0) i += size;
  if (i < 0 || i >= size) throw FxError(cat(kind, " index out of range"));
  return i;
}

int64_t slice_part(const IValue& v, int64_t fallback) {
  if (v.isNone()) return fallback;
  if (v.isInt()) return v.toInt();
  if (v.isTensor()) return v.toTensor().item<int64_t>();
  throw FxError(
      cat("slice indices must be integers or None, not ", value_type_name(v)));
}

std::vector<IValue> slice_sequence(const std::vector<IValue>& items,
                                   const SliceValue& s) {
  int64_t n = static_cast<int64_t>(items.size());
  int64_t step = slice_part(s.step, 1);
  if (step == 0) throw FxError("slice step cannot be zero");
  auto clamp_index = [&](int64_t i, bool is_start) {
    if (i < 0) i += n;
    if (step > 0) return std::clamp<int64_t>(i, 0, n);
    (void)is_start;
    return std::clamp<int64_t>(i, -1, n - 1);
  };
  int64_t start = s.start.isNone() ? (step > 0 ? 0 : n - 1)
                                   : clamp_index(slice_part(s.start, 0), true);
  int64_t stop = s.stop.isNone() ? (step > 0 ? n : -1)
                                 : clamp_index(slice_part(s.stop, 0), false);
  std::vector<IValue> out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    out.push_back(items[i]);
  }
  return out;
}

// Appends the TensorIndex for one Python index. Each is constructed in
// place: LibTorch's TensorIndex leaves the members of the other kinds
// uninitialised, so copying or moving one reads them (undefined behaviour
// that UBSan reports).
void append_tensor_index(std::vector<at::indexing::TensorIndex>* out,
                         const IValue& v) {
  using at::indexing::Slice;
  if (v.isNone()) {
    out->emplace_back(at::indexing::None);
  } else if (is_ellipsis(v)) {
    out->emplace_back(at::indexing::Ellipsis);
  } else if (v.isBool()) {
    out->emplace_back(v.toBool());
  } else if (v.isInt()) {
    out->emplace_back(v.toInt());
  } else if (v.isTensor()) {
    out->emplace_back(v.toTensor());
  } else if (const SliceValue* s = as_slice(v)) {
    auto part = [](const IValue& x) -> c10::optional<int64_t> {
      if (x.isNone()) return c10::nullopt;
      return slice_part(x, 0);
    };
    out->emplace_back(Slice(part(s->start), part(s->stop), part(s->step)));
  } else if (v.isList()) {
    // Advanced indexing with a list of ints (or of bools: a mask).
    std::vector<int64_t> ints;
    bool bools = !v.toListRef().empty();
    for (const IValue& item : v.toListRef()) bools = bools && item.isBool();
    if (bools) {
      std::vector<uint8_t> mask;
      for (const IValue& item : v.toListRef()) mask.push_back(item.toBool());
      out->emplace_back(at::tensor(mask).to(at::kBool));
      return;
    }
    for (const IValue& item : v.toListRef()) {
      if (!item.isInt()) {
        throw FxError(cat("unsupported index list element of type ",
                          value_type_name(item)));
      }
      ints.push_back(item.toInt());
    }
    out->emplace_back(at::tensor(ints, at::kLong));
  } else {
    throw FxError(cat("unsupported index of type ", value_type_name(v)));
  }
}

// Python (treatSequenceAsTuple) reads a short list holding a tensor, a
// sequence, a slice, Ellipsis or None as a tuple: x[[slice(0, 3), 1]] is
// x[0:3, 1]. A list of ints or bools stays one advanced index.
bool sequence_as_tuple(const IValue& index) {
  if (!index.isList()) return false;
  std::vector<IValue> items = sequence_elements(index);
  if (items.size() >= 32) return false;
  return std::any_of(items.begin(), items.end(), [](const IValue& v) {
    return v.isTensor() || is_sequence(v) || as_slice(v) != nullptr ||
           is_ellipsis(v) || v.isNone();
  });
}

// The TensorIndex list for `index` (a tuple indexes several dimensions).
std::vector<at::indexing::TensorIndex> tensor_indices(const IValue& index) {
  std::vector<at::indexing::TensorIndex> indices;
  if (index.isTuple() || sequence_as_tuple(index)) {
    std::vector<IValue> parts = sequence_elements(index);
    indices.reserve(parts.size());  // no reallocation: no moves
    for (const IValue& part : parts) append_tensor_index(&indices, part);
  } else {
    indices.reserve(1);
    append_tensor_index(&indices, index);
  }
  return indices;
}

IValue getitem(const IValue& obj, const IValue& index) {
  if (obj.isTensor()) {
    return obj.toTensor().index(tensor_indices(index));
  }
  if (is_sequence(obj)) {
    std::vector<IValue> items = sequence_elements(obj);
    if (const SliceValue* s = as_slice(index)) {
      return same_kind(obj, slice_sequence(items, *s));
    }
    if (index.isInt() || index.isBool()) {
      return items[seq_index(as_int(index), items.size(),
                             value_type_name(obj))];
    }
    if (index.isTensor() && index.toTensor().numel() == 1) {
      return items[seq_index(index.toTensor().item<int64_t>(), items.size(),
                             value_type_name(obj))];
    }
    throw FxError(cat(value_type_name(obj),
                      " indices must be integers or slices, not ",
                      value_type_name(index)));
  }
  if (obj.isGenericDict()) {
    auto dict = obj.toGenericDict();
    auto it = dict.find(index);
    if (it == dict.end()) {
      throw FxError(cat("KeyError: ", index.isString()
                                          ? index.toStringRef()
                                          : value_type_name(index)));
    }
    return it->value();
  }
  if (obj.isString()) {
    const std::string& s = obj.toStringRef();
    return std::string(1, s[seq_index(as_int(index), s.size(), "string")]);
  }
  throw FxError(
      cat("'", value_type_name(obj), "' object is not subscriptable"));
}

// Tensor.H: the conjugate transpose of a matrix (a 0-d tensor's conjugate).
at::Tensor matrix_h(const at::Tensor& t) {
  if (t.dim() == 0) return t.conj();
  if (t.dim() == 2) return t.transpose(0, 1).conj();
  throw FxError(cat(
      "tensor.H is only supported on matrices (2-D tensors). Got ", t.dim(),
      "-D tensor.",
      t.dim() > 2 ? " For batches of matrices, consider using tensor.mH" : ""));
}

IValue tensor_attribute(const at::Tensor& t, const std::string& name) {
  if (name == "shape") return make_torch_size(t.sizes());
  if (name == "dtype") return static_cast<int64_t>(t.scalar_type());
  if (name == "device") return t.device();
  if (name == "ndim") return t.dim();
  if (name == "T") return t.numpy_T();
  if (name == "mT") return t.mT();
  if (name == "mH") return t.mH();
  if (name == "H") return matrix_h(t);
  if (name == "is_cuda") return t.is_cuda();
  if (name == "requires_grad") return t.requires_grad();
  if (name == "data") return t.detach();
  if (name == "layout") return static_cast<int64_t>(t.layout());
  if (name == "real") return at::real(t);
  if (name == "imag") return at::imag(t);
  throw FxError(cat("'Tensor' object has no attribute '", name, "'"));
}

// Tensor.__iX__ for `op` (Tensor has no __imatmul__).
at::Tensor& tensor_inplace(Binary op, at::Tensor& t, const at::Tensor& other) {
  switch (op) {
    case Binary::kAdd:
      return t.add_(other);
    case Binary::kSub:
      return t.sub_(other);
    case Binary::kMul:
      return t.mul_(other);
    case Binary::kTrueDiv:
      return t.div_(other);
    case Binary::kFloorDiv:
      return t.floor_divide_(other);
    case Binary::kMod:
      return t.remainder_(other);
    case Binary::kPow:
      return t.pow_(other);
    case Binary::kAnd:
      return t.bitwise_and_(other);
    case Binary::kOr:
      return t.bitwise_or_(other);
    case Binary::kXor:
      return t.bitwise_xor_(other);
    case Binary::kLShift:
      return t.__ilshift__(other);
    case Binary::kRShift:
      return t.__irshift__(other);
    default:
      throw FxError("no in-place tensor operator");
  }
}

// Appends `items` to the list `list` in place, as list.extend; a list whose
// element type cannot hold them is rebuilt instead (a new object).
IValue extend_list(const IValue& list, const std::vector<IValue>& items) {
  c10::List<IValue> elements = list.toList();
  const c10::TypePtr& type = elements.elementType();
  bool fits = std::all_of(items.begin(), items.end(), [&](const IValue& v) {
    return v.type()->isSubtypeOf(*type);
  });
  if (!fits) {
    std::vector<IValue> all = elements.vec();
    all.insert(all.end(), items.begin(), items.end());
    return make_list(std::move(all));
  }
  for (const IValue& v : items) elements.push_back(v);
  return list;
}

// list *= n in place.
IValue repeat_list(const IValue& list, int64_t n) {
  c10::List<IValue> elements = list.toList();
  std::vector<IValue> one = elements.vec();
  const int64_t times = reserve_repeat(elements, one.size(), n);
  elements.clear();
  for (int64_t i = 0; i < times; ++i) {
    for (const IValue& v : one) elements.push_back(v);
  }
  return list;
}

// Python's operator.iX(a, b): a.__iX__(b) where a's type has one (tensors:
// mutated; lists: += and *= mutate), else a X b.
IValue inplace_binary(Binary op, std::string_view name, const IValue& a,
                      const IValue& b) {
  if (a.isTensor() && op != Binary::kMatMul && (b.isTensor() || is_number(b))) {
    at::Tensor t = a.toTensor();
    if (op == Binary::kPow && is_number(b)) return t.pow_(b.toScalar());
    return tensor_inplace(op, t, b.isTensor() ? b.toTensor() : wrap_number(b));
  }
  if (a.isList() && op == Binary::kAdd) {
    if (!is_sequence(b)) {
      throw FxError(cat("'", value_type_name(b), "' object is not iterable"));
    }
    return extend_list(a, sequence_elements(b));
  }
  if (a.isList() && op == Binary::kMul) return repeat_list(a, repeat_count(b));
  if (a.isTensor() && op == Binary::kMul && is_repeatable(b)) {
    // CPython's in-place multiply repeats only its left operand; a tensor
    // has sequence methods but no repeat, so `t *= [1]` is refused where
    // `t * [1]` repeats the list.
    throw FxError(cat("unsupported operand type(s) for *=: 'Tensor' and '",
                      value_type_name(b), "'"));
  }
  return binary(op, name, a, b);
}

// operator.iconcat(a, b): a += b for a sequence `a` (a list, tuple or
// string; CPython's PySequence_Check, which tensors fail).
IValue inplace_concat(const IValue& a, const IValue& b) {
  if (!is_sequence(a) && !a.isString()) {
    throw FxError(
        cat("'", value_type_name(a), "' object can't be concatenated"));
  }
  return inplace_binary(Binary::kAdd, "operator.iconcat", a, b);
}

// `cpp` is the C++ spelling: an infix operator ("+") or a call template.
void add_binary(OpRegistry& r, const char* name, Binary op,
                std::string_view cpp) {
  std::string target = cat("operator.", name);
  r.add(
      Opcode::kCallFunction, target, "a, b",
      [op, target](OpArgs& a) { return binary(op, target, a[0], a[1]); },
      cpp.find('{') == std::string_view::npos ? cat("({a} ", cpp, " {b})")
                                              : std::string(cpp));
}

}  // namespace

void register_python_ops(OpRegistry& r) {
  add_binary(r, "add", Binary::kAdd, "+");
  add_binary(r, "sub", Binary::kSub, "-");
  add_binary(r, "mul", Binary::kMul, "*");
  add_binary(r, "truediv", Binary::kTrueDiv, "/");
  add_binary(r, "floordiv", Binary::kFloorDiv, "at::div({a}, {b}, \"floor\")");
  add_binary(r, "mod", Binary::kMod, "%");
  add_binary(r, "pow", Binary::kPow, "at::pow({a}, {b})");
  add_binary(r, "matmul", Binary::kMatMul, "at::matmul({a}, {b})");
  add_binary(r, "and_", Binary::kAnd, "&");
  add_binary(r, "or_", Binary::kOr, "|");
  add_binary(r, "xor", Binary::kXor, "^");
  add_binary(r, "lshift", Binary::kLShift, "<<");
  add_binary(r, "rshift", Binary::kRShift, ">>");
  add_binary(r, "eq", Binary::kEq, "==");
  add_binary(r, "ne", Binary::kNe, "!=");
  add_binary(r, "lt", Binary::kLt, "<");
  add_binary(r, "le", Binary::kLe, "<=");
  add_binary(r, "gt", Binary::kGt, ">");
  add_binary(r, "ge", Binary::kGe, ">=");
  r.add(
      Opcode::kCallFunction, "operator.neg", "a",
      [](OpArgs& a) -> IValue {
        if (a[0].isTensor()) return at::neg(a.tensor(0));
        if (a[0].isDouble()) return -a[0].toDouble();
        return -as_int(a[0]);
      },
      "(-{a})");
  r.add(
      Opcode::kCallFunction, "operator.pos", "a",
      [](OpArgs& a) -> IValue { return a[0]; }, "(+{a})");
  r.add(
      Opcode::kCallFunction, "operator.abs", "a",
      [](OpArgs& a) -> IValue {
        if (a[0].isTensor()) return at::abs(a.tensor(0));
        if (a[0].isDouble()) return std::fabs(a[0].toDouble());
        return std::abs(as_int(a[0]));
      },
      "at::abs({a})");
  r.add(
      Opcode::kCallFunction, "operator.invert", "a",
      [](OpArgs& a) -> IValue {
        if (a[0].isTensor()) return at::bitwise_not(a.tensor(0));
        return ~as_int(a[0]);
      },
      "(~{a})");
  // concrete_args' check that an argument traced as None is None (the
  // tracer's and torch.fx's graphs, split_module's children).
  r.add(Opcode::kCallFunction, "torch.fx._symbolic_trace._assert_is_none",
        "value, msg", [](OpArgs& a) -> IValue {
          if (!a.is_none(0)) throw FxError(a.to_string(1));
          return IValue();
        });
  r.add(Opcode::kCallFunction, "operator.not_", "a", [](OpArgs& a) -> IValue {
    if (a[0].isTensor()) return at::logical_not(a.tensor(0));
    return !a.to_bool(0);
  });
  r.add(
      Opcode::kCallFunction, "operator.getitem", "a, b",
      [](OpArgs& a) { return getitem(a[0], a[1]); }, "{a}[{b}]");
  r.add(Opcode::kCallFunction, "operator.setitem", "a, b, c",
        [](OpArgs& a) -> IValue {
          if (!a[0].isTensor()) {
            throw FxError("operator.setitem is supported on tensors only");
          }
          std::vector<at::indexing::TensorIndex> indices = tensor_indices(a[1]);
          at::Tensor target = a.tensor(0);
          if (a[2].isTensor()) {
            target.index_put_(indices, a.tensor(2));
          } else {
            target.index_put_(indices, a.scalar(2));
          }
          return IValue();
        });
  r.add(Opcode::kCallFunction, "operator.contains", "a, b",
        [](OpArgs& a) -> IValue {
          for (const IValue& v : sequence_elements(a[0])) {
            if (values_equal(v, a[1])) return true;
          }
          return false;
        });
  r.add(Opcode::kCallFunction, "operator.is_", "a, b",
        [](OpArgs& a) -> IValue { return a[0].isSameIdentity(a[1]); });
  r.add(Opcode::kCallFunction, "operator.is_not", "a, b",
        [](OpArgs& a) -> IValue { return !a[0].isSameIdentity(a[1]); });
  // In-place operators, as Python's operator.iX: a tensor or list mutated
  // and returned, any other value's new value.
  for (auto [name, op] : std::initializer_list<std::pair<const char*, Binary>>{
           {"iadd", Binary::kAdd},
           {"isub", Binary::kSub},
           {"imul", Binary::kMul},
           {"itruediv", Binary::kTrueDiv},
           {"ifloordiv", Binary::kFloorDiv},
           {"imod", Binary::kMod},
           {"ipow", Binary::kPow},
           {"iand", Binary::kAnd},
           {"ior", Binary::kOr},
           {"ixor", Binary::kXor},
           {"ilshift", Binary::kLShift},
           {"irshift", Binary::kRShift},
           {"imatmul", Binary::kMatMul}}) {
    std::string target = cat("operator.", name);
    r.add(Opcode::kCallFunction, target, "a, b",
          [op = op, target](OpArgs& a) -> IValue {
            return inplace_binary(op, target, a[0], a[1]);
          });
  }
  r.add(Opcode::kCallFunction, "operator.iconcat", "a, b",
        [](OpArgs& a) -> IValue { return inplace_concat(a[0], a[1]); });

  // getattr(obj, name[, default]): the default, given positionally only as
  // Python's builtin takes it, is returned for a missing attribute.
  r.add(Opcode::kCallFunction, "builtins.getattr", "obj, name, *default",
        [](OpArgs& a) -> IValue {
          std::string name = a.to_string(1);
          const auto& rest = a[2].toTupleRef().elements();
          if (rest.size() > 1) {
            throw FxError(cat("getattr expected at most 3 arguments, got ",
                              2 + rest.size()));
          }
          try {
            if (a[0].isTensor()) return tensor_attribute(a.tensor(0), name);
            if (auto field = named_tuple_field(a[0], name)) return *field;
            if (a[0].isObject()) {  // a TorchScript class's instance
              const c10::ivalue::Object& object = a[0].toObjectRef();
              if (object.type()->hasAttribute(name)) {
                return object.getAttr(name);
              }
            }
            throw FxError(cat("'", value_type_name(a[0]),
                              "' object has no attribute '", name, "'"));
          } catch (const FxError&) {
            if (rest.empty()) throw;
            return rest[0];
          }
        });
  r.add(
      Opcode::kCallFunction, "builtins.len", "obj",
      [](OpArgs& a) -> IValue {
        if (a[0].isTensor()) {
          if (a.tensor(0).dim() == 0) {
            throw FxError("len() of a 0-d tensor");
          }
          return a.tensor(0).size(0);
        }
        if (a[0].isString()) {
          return static_cast<int64_t>(a[0].toStringRef().size());
        }
        return static_cast<int64_t>(sequence_elements(a[0]).size());
      },
      "{obj}.size(0)");
  r.add(Opcode::kCallFunction, "builtins.int", "x", [](OpArgs& a) -> IValue {
    if (a[0].isDouble()) return static_cast<int64_t>(a[0].toDouble());
    return a.to_int(0);
  });
  r.add(Opcode::kCallFunction, "builtins.float", "x",
        [](OpArgs& a) -> IValue { return a.to_double(0); });

  struct MathFn {
    const char* name;
    double (*fn)(double);
  };
  for (MathFn m : {MathFn{"sqrt", [](double x) { return std::sqrt(x); }},
                   MathFn{"exp", [](double x) { return std::exp(x); }},
                   MathFn{"log", [](double x) { return std::log(x); }},
                   MathFn{"sin", [](double x) { return std::sin(x); }},
                   MathFn{"cos", [](double x) { return std::cos(x); }},
                   MathFn{"tanh", [](double x) { return std::tanh(x); }}}) {
    r.add(
        Opcode::kCallFunction, cat("math.", m.name), "x",
        [fn = m.fn](OpArgs& a) -> IValue { return fn(a.to_double(0)); },
        cat("std::", m.name, "(static_cast<double>({x}))"));
  }
  r.add(Opcode::kCallFunction, "math.floor", "x", [](OpArgs& a) -> IValue {
    return static_cast<int64_t>(std::floor(a.to_double(0)));
  });
  r.add(Opcode::kCallFunction, "math.ceil", "x", [](OpArgs& a) -> IValue {
    return static_cast<int64_t>(std::ceil(a.to_double(0)));
  });
}

}  // namespace fx::ops
