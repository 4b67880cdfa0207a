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

#include "fx_core/ir/python_repr.h"
#include "fx_core/runtime/ops/builtin_ops.h"
#include "fx_core/runtime/ops/python_numbers.h"
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

// Python's truth value of `v` (bool(v), `not v`): a tensor of one element
// is its value; an empty or larger one is ambiguous, as torch says.
bool truth(const IValue& v) {
  if (v.isNone()) return false;
  if (v.isBool()) return v.toBool();
  if (v.isInt()) return v.toInt() != 0;
  if (v.isDouble()) return v.toDouble() != 0;
  if (v.isString()) return !v.toStringRef().empty();
  if (v.isGenericDict()) return v.toGenericDict().size() != 0;
  if (is_sequence(v)) return !sequence_elements(v).empty();
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (t.numel() != 1) {
      throw FxError(cat("RuntimeError: Boolean value of Tensor with ",
                        t.numel() == 0 ? "no values" : "more than one value",
                        " is ambiguous"));
    }
    return t.item().toBool();
  }
  return true;  // slices, Ellipsis, devices, objects
}

// v.__index__(): an int, a bool or an integer tensor of one element;
// std::nullopt for anything else. A float tensor raises torch's TypeError.
std::optional<int64_t> python_index(const IValue& v) {
  if (v.isInt() || v.isBool()) return as_int(v);
  if (!v.isTensor()) return std::nullopt;
  const at::Tensor& t = v.toTensor();
  if (t.numel() != 1 ||
      !c10::isIntegralType(t.scalar_type(), /*includeBool=*/true)) {
    throw FxError(
        "TypeError: only integer tensors of a single element can be "
        "converted to an index");
  }
  return t.item<int64_t>();
}

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

// Python's symbol for `op` in its TypeErrors ("unsupported operand type(s)
// for +", "'<' not supported between ...").
const char* symbol(Binary op) {
  static constexpr const char* kSymbols[] = {
      "+", "-",  "*",  "/",  "//", "%", "** or pow()", "@", "&", "|",
      "^", "<<", ">>", "==", "!=", "<", "<=",          ">", ">="};
  return kSymbols[static_cast<int>(op)];
}

bool is_ordering(Binary op) {
  return op == Binary::kLt || op == Binary::kLe || op == Binary::kGt ||
         op == Binary::kGe;
}

// CPython's TypeError for operands `op` does not take (`inplace`: the
// operator.iX form, "+=").
[[noreturn]] void unsupported(Binary op, bool inplace, const IValue& a,
                              const IValue& b) {
  const std::string x = value_type_name(a), y = value_type_name(b);
  if (is_ordering(op)) {
    throw FxError(cat("TypeError: '", symbol(op),
                      "' not supported between instances of '", x, "' and '", y,
                      "'"));
  }
  if (op == Binary::kAdd && (is_sequence(a) || a.isString())) {
    throw FxError(cat("TypeError: can only concatenate ",
                      a.isString() ? "str"
                      : a.isList() ? "list"
                                   : "tuple",
                      " (not \"", y, "\") to ",
                      a.isString() ? "str"
                      : a.isList() ? "list"
                                   : "tuple"));
  }
  const std::string sym = !inplace             ? symbol(op)
                          : op == Binary::kPow ? "**="
                                               : cat(symbol(op), "=");
  throw FxError(cat("TypeError: unsupported operand type(s) for ", sym, ": '",
                    x, "' and '", y, "'"));
}

// A comparison from a three-way result (-1, 0, 1; 2: unordered, a NaN).
bool compare(Binary op, int order) {
  if (order == 2) return op == Binary::kNe;
  switch (op) {
    case Binary::kEq:
      return order == 0;
    case Binary::kNe:
      return order != 0;
    case Binary::kLt:
      return order < 0;
    case Binary::kLe:
      return order <= 0;
    case Binary::kGt:
      return order > 0;
    default:
      return order >= 0;
  }
}

template <typename T>
int three_way(T x, T y) {
  return x < y ? -1 : x > y ? 1 : x == y ? 0 : 2;
}

bool is_comparison(Binary op) {
  return op == Binary::kEq || op == Binary::kNe || is_ordering(op);
}

// Two ints (bools count as ints): exact, or an OverflowError beyond 64 bits.
IValue int_binary(Binary op, bool inplace, int64_t x, int64_t y,
                  const IValue& a, const IValue& b) {
  if (is_comparison(op)) return compare(op, three_way(x, y));
  switch (op) {
    case Binary::kAdd:
      return py_add(x, y);
    case Binary::kSub:
      return py_sub(x, y);
    case Binary::kMul:
      return py_mul(x, y);
    case Binary::kTrueDiv:
      return py_truediv(x, y);
    case Binary::kFloorDiv:
      return py_floordiv(x, y);
    case Binary::kMod:
      return py_mod(x, y);
    case Binary::kPow:
      if (y >= 0) return py_pow(x, y);
      if (x == 0) {
        throw FxError(
            "ZeroDivisionError: 0.0 cannot be raised to a negative power");
      }
      return std::pow(static_cast<double>(x), static_cast<double>(y));
    case Binary::kAnd:
      return x & y;
    case Binary::kOr:
      return x | y;
    case Binary::kXor:
      return x ^ y;
    case Binary::kLShift:
      return py_lshift(x, y);
    case Binary::kRShift:
      return py_rshift(x, y);
    default:
      unsupported(op, inplace, a, b);
  }
}

// Python's float ** float: an OverflowError where the result leaves the
// finite range; a negative base's fractional power is complex in Python,
// which the runtime's floats cannot hold.
double float_pow(double x, double y) {
  if (x == 0 && y < 0) {
    throw FxError(
        "ZeroDivisionError: 0.0 cannot be raised to a negative power");
  }
  if (x < 0 && std::isfinite(x) && std::isfinite(y) && y != std::floor(y)) {
    throw FxError(cat("ValueError: (", python_float_repr(x), ") ** ",
                      python_float_repr(y),
                      " is a complex number in Python; the runtime's floats "
                      "are real"));
  }
  const double r = std::pow(x, y);
  if (std::isinf(r) && std::isfinite(x) && std::isfinite(y)) {
    throw FxError("OverflowError: (34, 'Numerical result out of range')");
  }
  return r;
}

IValue float_binary(Binary op, bool inplace, double x, double y,
                    const IValue& a, const IValue& b) {
  switch (op) {
    case Binary::kAdd:
      return x + y;
    case Binary::kSub:
      return x - y;
    case Binary::kMul:
      return x * y;
    case Binary::kTrueDiv:
      if (y == 0) throw FxError("ZeroDivisionError: float division by zero");
      return x / y;
    case Binary::kFloorDiv:
    case Binary::kMod: {
      if (y == 0) {
        throw FxError(op == Binary::kMod
                          ? "ZeroDivisionError: float modulo"
                          : "ZeroDivisionError: float floor division by zero");
      }
      double div, mod;
      py_float_divmod(x, y, &div, &mod);
      return op == Binary::kMod ? mod : div;
    }
    case Binary::kPow:
      return float_pow(x, y);
    default:
      if (is_comparison(op)) return compare(op, three_way(x, y));
      unsupported(op, inplace, a, b);
  }
}

IValue number_binary(Binary op, bool inplace, const IValue& a,
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
  if (!a.isDouble() && !b.isDouble()) {
    return int_binary(op, inplace, as_int(a), as_int(b), a, b);
  }
  if (is_comparison(op) && a.isDouble() != b.isDouble()) {
    // An int against a float compares exactly, as Python's does.
    const int order = a.isDouble() ? -compare_int_float(as_int(b), a.toDouble())
                                   : compare_int_float(as_int(a), b.toDouble());
    return compare(op, order == -2 ? 2 : order);
  }
  return float_binary(op, inplace, as_double(a), as_double(b), a, b);
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
bool dicts_equal(const IValue& a, const IValue& b);
IValue binary(Binary op, bool inplace, const IValue& a, const IValue& b);
std::optional<bool> sequence_order(Binary op, const IValue& a, const IValue& b);

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
  if (std::optional<int64_t> count = python_index(n)) return *count;
  throw FxError(cat("TypeError: can't multiply sequence by non-int of type '",
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

IValue binary(Binary op, bool inplace, const IValue& a, const IValue& b) {
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
  if (is_number(a) && is_number(b)) return number_binary(op, inplace, a, b);
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
  if (is_ordering(op)) {
    if (std::optional<bool> r = sequence_order(op, a, b)) return *r;
  }
  unsupported(op, inplace, a, b);
}

// Python's <, <=, >, >= on two strs (by code point: UTF-8's byte order) or
// two lists or two tuples (torch.Size is one): the first unequal items
// decide, else the lengths; std::nullopt for other operands.
std::optional<bool> sequence_order(Binary op, const IValue& a,
                                   const IValue& b) {
  if (a.isString() && b.isString()) {
    return compare(op, three_way(a.toStringRef().compare(b.toStringRef()), 0));
  }
  if (!is_sequence(a) || !is_sequence(b) || a.isTuple() != b.isTuple()) {
    return std::nullopt;
  }
  std::vector<IValue> x = sequence_elements(a), y = sequence_elements(b);
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (!values_equal(x[i], y[i])) {
      return truth(binary(op, /*inplace=*/false, x[i], y[i]));
    }
  }
  return compare(op, three_way(x.size(), y.size()));
}

// Python's a == b for the values a graph holds (list items compared as
// list.__eq__ does: an item is equal to itself, else by ==, whose result's
// truth is taken: a one-element tensor is its value).
bool values_equal(const IValue& a, const IValue& b) {
  if (is_number(a) && is_number(b)) {
    return number_binary(Binary::kEq, /*inplace=*/false, a, b).toBool();
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
    if (a.isTensor() && b.isTensor() && a.toTensor().is_same(b.toTensor())) {
      return true;
    }
    const bool comparable =
        (a.isTensor() || is_number(a)) && (b.isTensor() || is_number(b));
    return comparable && truth(binary(Binary::kEq, /*inplace=*/false, a, b));
  }
  if (a.isGenericDict() && b.isGenericDict()) return dicts_equal(a, b);
  const SliceValue *x = as_slice(a), *y = as_slice(b);
  if (x != nullptr || y != nullptr) {
    return x != nullptr && y != nullptr && values_equal(x->start, y->start) &&
           values_equal(x->stop, y->stop) && values_equal(x->step, y->step);
  }
  if (is_ellipsis(a) || is_ellipsis(b)) return is_ellipsis(a) && is_ellipsis(b);
  return a.tagKind() == b.tagKind() && a.hash(a) == b.hash(b);
}

bool dicts_equal(const IValue& a, const IValue& b) {
  const c10::Dict<IValue, IValue> x = a.toGenericDict(), y = b.toGenericDict();
  if (x.size() != y.size()) return false;
  for (const auto& entry : x) {
    auto found = y.find(entry.key());
    if (found == y.end() || !values_equal(entry.value(), found->value())) {
      return false;
    }
  }
  return true;
}

// Python's index normalisation for sequences; `kind` names the sequence in
// the error ("tuple index out of range").
int64_t seq_index(int64_t i, size_t n, std::string_view kind) {
  int64_t size = static_cast<int64_t>(n);
  if (i < 0) i += size;
  if (i < 0 || i >= size) {
    throw FxError(cat("IndexError: ", kind, " index out of range"));
  }
  return i;
}

int64_t slice_part(const IValue& v, int64_t fallback) {
  if (v.isNone()) return fallback;
  if (std::optional<int64_t> i = python_index(v)) return *i;
  throw FxError(
      "TypeError: slice indices must be integers or None or have an "
      "__index__ method");
}

// The indices seq[start:stop:step] takes from a sequence of n items, as
// CPython's PySlice_AdjustIndices gives them; no index arithmetic
// overflows, whatever the ints (a step of 2**63 - 1 takes one item).
std::vector<int64_t> slice_indices(int64_t n, const SliceValue& s) {
  int64_t step = slice_part(s.step, 1);
  if (step == 0) throw FxError("ValueError: slice step cannot be zero");
  step = std::max(step, -std::numeric_limits<int64_t>::max());
  auto adjust = [&](const IValue& v, int64_t forward, int64_t backward) {
    if (v.isNone()) return step > 0 ? forward : backward;
    int64_t i = slice_part(v, 0);
    if (i < 0) {
      i += n;
      if (i < 0) i = step < 0 ? -1 : 0;
    } else if (i >= n) {
      i = step < 0 ? n - 1 : n;
    }
    return i;
  };
  const int64_t start = adjust(s.start, 0, n - 1);
  const int64_t stop = adjust(s.stop, n, -1);
  std::vector<int64_t> out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop;) {
    out.push_back(i);
    if (step > 0 ? stop - i <= step : i - stop <= -step) break;
    i += step;
  }
  return out;
}

std::vector<IValue> slice_sequence(const std::vector<IValue>& items,
                                   const SliceValue& s) {
  std::vector<IValue> out;
  for (int64_t i : slice_indices(static_cast<int64_t>(items.size()), s)) {
    out.push_back(items[i]);
  }
  return out;
}

// A str's characters (code points) as views of its UTF-8 bytes: Python
// indexes, slices and measures a str by code point.
std::vector<std::string_view> characters(const std::string& s) {
  std::vector<std::string_view> out;
  for (size_t i = 0; i < s.size();) {
    const auto lead = static_cast<unsigned char>(s[i]);
    size_t n = lead < 0x80           ? 1
               : (lead >> 5) == 0x6  ? 2
               : (lead >> 4) == 0xE  ? 3
               : (lead >> 3) == 0x1E ? 4
                                     : 1;
    n = std::min(n, s.size() - i);
    out.emplace_back(s.data() + i, n);
    i += n;
  }
  return out;
}

IValue string_item(const std::string& s, const IValue& index) {
  std::vector<std::string_view> chars = characters(s);
  if (const SliceValue* slice = as_slice(index)) {
    std::string out;
    for (int64_t i :
         slice_indices(static_cast<int64_t>(chars.size()), *slice)) {
      out += chars[i];
    }
    return out;
  }
  if (std::optional<int64_t> i = python_index(index)) {
    return std::string(chars[seq_index(*i, chars.size(), "string")]);
  }
  throw FxError(cat("TypeError: string indices must be integers, not '",
                    value_type_name(index), "'"));
}

// repr(key) in a KeyError, for the keys a graph's dicts hold.
std::string key_repr(const IValue& key) {
  if (key.isString()) return cat("'", key.toStringRef(), "'");
  if (key.isBool()) return key.toBool() ? "True" : "False";
  if (key.isInt()) return std::to_string(key.toInt());
  if (key.isNone()) return "None";
  return value_type_name(key);
}

// Where `key` is in `dict`: a bool or an integral float finds the int key
// it equals, as Python's hash and == make it ({1: 'a'}[True] is 'a').
c10::Dict<IValue, IValue>::iterator find_key(
    const c10::Dict<IValue, IValue>& dict, const IValue& key) {
  auto it = dict.find(key);
  if (it == dict.end() && (key.isBool() || key.isDouble())) {
    const double x = key.isBool() ? key.toBool() : key.toDouble();
    if (x == std::floor(x) && std::fabs(x) < 9.2e18) {
      it = dict.find(IValue(static_cast<int64_t>(x)));
    }
  }
  return it;
}

IValue dict_item(const c10::Dict<IValue, IValue>& dict, const IValue& key) {
  auto it = find_key(dict, key);
  if (it == dict.end()) throw FxError(cat("KeyError: ", key_repr(key)));
  return it->value();
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
    if (std::optional<int64_t> i = python_index(index)) {
      return items[seq_index(*i, items.size(),
                             obj.isTuple() ? "tuple" : "list")];
    }
    throw FxError(cat("TypeError: ", value_type_name(obj),
                      " indices must be integers or slices, not ",
                      value_type_name(index)));
  }
  if (obj.isGenericDict()) return dict_item(obj.toGenericDict(), index);
  if (obj.isString()) return string_item(obj.toStringRef(), index);
  throw FxError(cat("TypeError: '", value_type_name(obj),
                    "' object is not subscriptable"));
}

// `item in container` (operator.contains(container, item)).
bool contains(const IValue& container, const IValue& item) {
  if (container.isString()) {
    if (!item.isString()) {
      throw FxError(
          cat("TypeError: 'in <string>' requires string as left "
              "operand, not ",
              value_type_name(item)));
    }
    return container.toStringRef().find(item.toStringRef()) !=
           std::string::npos;
  }
  if (container.isGenericDict()) {
    const c10::Dict<IValue, IValue> dict = container.toGenericDict();
    return find_key(dict, item) != dict.end();
  }
  if (container.isTensor()) {
    if (!item.isTensor() && !is_number(item)) {
      throw FxError(
          cat("RuntimeError: Tensor.__contains__ only supports "
              "Tensor or scalar, but you passed in a ",
              value_type_name(item)));
    }
    const at::Tensor& t = container.toTensor();
    return (item.isTensor() ? at::eq(t, item.toTensor())
                            : at::eq(t, item.toScalar()))
        .any()
        .item<bool>();
  }
  if (!is_sequence(container)) {
    throw FxError(cat("TypeError: argument of type '",
                      value_type_name(container), "' is not iterable"));
  }
  for (const IValue& v : sequence_elements(container)) {
    if (values_equal(v, item)) return true;
  }
  return false;
}

// len(obj).
int64_t length(const IValue& obj) {
  if (obj.isTensor()) {
    if (obj.toTensor().dim() == 0) {
      throw FxError("TypeError: len() of a 0-d tensor");
    }
    return obj.toTensor().size(0);
  }
  if (obj.isString()) {
    return static_cast<int64_t>(characters(obj.toStringRef()).size());
  }
  if (obj.isGenericDict()) {
    return static_cast<int64_t>(obj.toGenericDict().size());
  }
  if (!is_sequence(obj)) {
    throw FxError(cat("TypeError: object of type '", value_type_name(obj),
                      "' has no len()"));
  }
  return static_cast<int64_t>(sequence_elements(obj).size());
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
  if (name == "grad") {
    const at::Tensor& grad = t.grad();
    return grad.defined() ? IValue(grad) : IValue();
  }
  if (name == "is_leaf") return t.is_leaf();
  if (name == "is_sparse") return t.is_sparse();
  if (name == "is_quantized") return t.is_quantized();
  if (name == "is_meta") return t.is_meta();
  if (name == "imag") return at::imag(t);
  throw FxError(cat("'Tensor' object has no attribute '", name, "'"));
}

IValue device_attribute(const c10::Device& device, const std::string& name) {
  if (name == "type") {
    return c10::DeviceTypeName(device.type(), /*lower_case=*/true);
  }
  if (name == "index") {
    return device.has_index() ? IValue(int64_t{device.index()}) : IValue();
  }
  throw FxError(cat("'torch.device' object has no attribute '", name, "'"));
}

// Python's iter(v) as `list += v` walks it: a list's or tuple's items, a
// str's characters, a dict's keys, a tensor's rows.
std::vector<IValue> iterate(const IValue& v) {
  if (is_sequence(v)) return sequence_elements(v);
  std::vector<IValue> out;
  if (v.isString()) {
    for (std::string_view c : characters(v.toStringRef())) {
      out.emplace_back(std::string(c));
    }
  } else if (v.isGenericDict()) {
    for (const auto& entry : v.toGenericDict()) out.push_back(entry.key());
  } else if (v.isTensor() && v.toTensor().dim() > 0) {
    for (at::Tensor& row : v.toTensor().unbind(0)) out.emplace_back(row);
  } else if (v.isTensor()) {
    throw FxError("TypeError: iteration over a 0-d tensor");
  } else {
    throw FxError(
        cat("TypeError: '", value_type_name(v), "' object is not iterable"));
  }
  return out;
}

// obj[index] = value (operator.setitem): a tensor indexed as torch does, a
// list's item, a dict's entry. A list built of one type (the runtime's
// lists are typed when homogeneous) takes only values of that type.
void setitem(const IValue& obj, const IValue& index, const IValue& value) {
  if (obj.isTensor()) {
    std::vector<at::indexing::TensorIndex> indices = tensor_indices(index);
    at::Tensor target = obj.toTensor();
    if (value.isTensor()) {
      target.index_put_(indices, value.toTensor());
    } else {
      target.index_put_(indices, value.toScalar());
    }
  } else if (obj.isList()) {
    c10::List<IValue> items = obj.toList();
    std::optional<int64_t> i = python_index(index);
    if (!i) {
      throw FxError(cat("TypeError: list indices must be integers, not ",
                        value_type_name(index),
                        " (slice assignment is not supported here)"));
    }
    const int64_t size = static_cast<int64_t>(items.size());
    const int64_t k = *i < 0 ? *i + size : *i;
    if (k < 0 || k >= size) {
      throw FxError("IndexError: list assignment index out of range");
    }
    if (!value.type()->isSubtypeOf(*items.elementType())) {
      throw FxError(cat("TypeError: this list holds ",
                        items.elementType()->annotation_str(),
                        " only (the runtime types a list built of one "
                        "type), not '",
                        value_type_name(value), "'"));
    }
    items.set(k, value);
  } else if (obj.isGenericDict()) {
    obj.toGenericDict().insert_or_assign(index, value);
  } else {
    throw FxError(cat("TypeError: '", value_type_name(obj),
                      "' object does not support item assignment"));
  }
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
IValue inplace_binary(Binary op, const IValue& a, const IValue& b) {
  if (a.isTensor() && op != Binary::kMatMul && (b.isTensor() || is_number(b))) {
    at::Tensor t = a.toTensor();
    if (op == Binary::kPow && is_number(b)) return t.pow_(b.toScalar());
    return tensor_inplace(op, t, b.isTensor() ? b.toTensor() : wrap_number(b));
  }
  if (a.isList() && op == Binary::kAdd) return extend_list(a, iterate(b));
  if (a.isList() && op == Binary::kMul) return repeat_list(a, repeat_count(b));
  if (a.isTensor() && op == Binary::kMul && is_repeatable(b)) {
    // CPython's in-place multiply repeats only its left operand; a tensor
    // has sequence methods but no repeat, so `t *= [1]` is refused where
    // `t * [1]` repeats the list.
    throw FxError(
        cat("TypeError: unsupported operand type(s) for *=: 'Tensor' and '",
            value_type_name(b), "'"));
  }
  return binary(op, /*inplace=*/true, a, b);
}

// operator.concat and iconcat take a sequence first (a list, tuple or str:
// CPython's PySequence_Check, which tensors fail).
void check_concatenable(const IValue& a) {
  if (!is_sequence(a) && !a.isString()) {
    throw FxError(cat("TypeError: '", value_type_name(a),
                      "' object can't be concatenated"));
  }
}

// operator.iconcat(a, b): a += b.
IValue inplace_concat(const IValue& a, const IValue& b) {
  check_concatenable(a);
  return inplace_binary(Binary::kAdd, a, b);
}

// Python's `a is b`: Ellipsis is one object (each of its IValues a new
// capsule).
bool same_object(const IValue& a, const IValue& b) {
  if (is_ellipsis(a) || is_ellipsis(b)) return is_ellipsis(a) && is_ellipsis(b);
  return a.isSameIdentity(b);
}

// The int a unary operator takes (a bool counts as 1 or 0), or CPython's
// TypeError naming the operator ("bad operand type for unary -: 'str'").
int64_t unary_int(const IValue& v, std::string_view op) {
  if (v.isInt() || v.isBool()) return as_int(v);
  throw FxError(cat("TypeError: bad operand type for ", op, ": '",
                    value_type_name(v), "'"));
}

// Python's int(x): a float's integer part, a str's decimal literal, a
// one-element tensor's value (truncated).
int64_t to_python_int(OpArgs& a, size_t i) {
  const IValue& v = a[i];
  if (v.isDouble()) return float_to_int(v.toDouble());
  if (v.isString()) return parse_int(v.toStringRef());
  if (v.isTensor() && v.toTensor().numel() == 1 &&
      v.toTensor().is_floating_point()) {
    return float_to_int(v.toTensor().item<double>());
  }
  return a.to_int(i);
}

// `cpp` is the C++ spelling: an infix operator ("+") or a call template.
void add_binary(OpRegistry& r, const char* name, Binary op,
                std::string_view cpp) {
  std::string target = cat("operator.", name);
  r.add(
      Opcode::kCallFunction, target, "a, b",
      [op](OpArgs& a) { return binary(op, /*inplace=*/false, a[0], a[1]); },
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
        return py_neg(unary_int(a[0], "unary -"));
      },
      "(-{a})");
  r.add(
      Opcode::kCallFunction, "operator.pos", "a",
      [](OpArgs& a) -> IValue {
        if (a[0].isTensor() || a[0].isDouble()) return a[0];
        return unary_int(a[0], "unary +");  // +True is 1
      },
      "(+{a})");
  r.add(
      Opcode::kCallFunction, "operator.abs", "a",
      [](OpArgs& a) -> IValue {
        if (a[0].isTensor()) return at::abs(a.tensor(0));
        if (a[0].isDouble()) return std::fabs(a[0].toDouble());
        return py_abs(unary_int(a[0], "abs()"));
      },
      "at::abs({a})");
  r.add(
      Opcode::kCallFunction, "operator.invert", "a",
      [](OpArgs& a) -> IValue {
        if (a[0].isTensor()) return at::bitwise_not(a.tensor(0));
        return ~unary_int(a[0], "unary ~");
      },
      "(~{a})");
  // concrete_args' check that an argument traced as None is None (the
  // tracer's and torch.fx's graphs, split_module's children).
  r.add(Opcode::kCallFunction, "torch.fx._symbolic_trace._assert_is_none",
        "value, msg", [](OpArgs& a) -> IValue {
          if (!a.is_none(0)) throw FxError(a.to_string(1));
          return IValue();
        });
  r.add(Opcode::kCallFunction, "operator.not_", "a",
        [](OpArgs& a) -> IValue { return !truth(a[0]); });
  r.add(Opcode::kCallFunction, "operator.truth", "a",
        [](OpArgs& a) -> IValue { return truth(a[0]); });
  r.add(Opcode::kCallFunction, "operator.index", "a", [](OpArgs& a) -> IValue {
    if (std::optional<int64_t> i = python_index(a[0])) return *i;
    throw FxError(cat("TypeError: '", value_type_name(a[0]),
                      "' object cannot be interpreted as an integer"));
  });
  r.add(
      Opcode::kCallFunction, "operator.getitem", "a, b",
      [](OpArgs& a) { return getitem(a[0], a[1]); }, "{a}[{b}]");
  r.add(Opcode::kCallFunction, "operator.setitem", "a, b, c",
        [](OpArgs& a) -> IValue {
          setitem(a[0], a[1], a[2]);
          return IValue();
        });
  r.add(Opcode::kCallFunction, "operator.contains", "a, b",
        [](OpArgs& a) -> IValue { return contains(a[0], a[1]); });
  r.add(Opcode::kCallFunction, "operator.is_", "a, b",
        [](OpArgs& a) -> IValue { return same_object(a[0], a[1]); });
  r.add(Opcode::kCallFunction, "operator.is_not", "a, b",
        [](OpArgs& a) -> IValue { return !same_object(a[0], a[1]); });
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
          [op = op](OpArgs& a) -> IValue {
            return inplace_binary(op, a[0], a[1]);
          });
  }
  r.add(Opcode::kCallFunction, "operator.iconcat", "a, b",
        [](OpArgs& a) -> IValue { return inplace_concat(a[0], a[1]); });
  r.add(Opcode::kCallFunction, "operator.concat", "a, b",
        [](OpArgs& a) -> IValue {
          check_concatenable(a[0]);
          return binary(Binary::kAdd, /*inplace=*/false, a[0], a[1]);
        });

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
            if (a[0].isDevice()) return device_attribute(a[0].toDevice(), name);
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
      [](OpArgs& a) -> IValue { return length(a[0]); }, "{obj}.size(0)");
  r.add(Opcode::kCallFunction, "builtins.int", "x",
        [](OpArgs& a) -> IValue { return to_python_int(a, 0); });
  r.add(Opcode::kCallFunction, "builtins.float", "x", [](OpArgs& a) -> IValue {
    if (a[0].isString()) return parse_float(a[0].toStringRef());
    return a.to_double(0);
  });
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
        [fn = m.fn, exp = m.name == std::string_view("exp")](OpArgs& a)
            -> IValue { return math_function(fn, a.to_double(0), exp); },
        cat("std::", m.name, "(static_cast<double>({x}))"));
  }
  // math.floor and math.ceil of an int are that int, exactly.
  r.add(Opcode::kCallFunction, "math.floor", "x", [](OpArgs& a) -> IValue {
    if (a[0].isInt() || a[0].isBool()) return as_int(a[0]);
    return float_to_int(std::floor(a.to_double(0)));
  });
  r.add(Opcode::kCallFunction, "math.ceil", "x", [](OpArgs& a) -> IValue {
    if (a[0].isInt() || a[0].isBool()) return as_int(a[0]);
    return float_to_int(std::ceil(a.to_double(0)));
  });
}

}  // namespace fx::ops
