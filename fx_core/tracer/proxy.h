// fx::Value: the value traceable C++ model code computes with (torch.fx's
// Proxy, and the real tensor it stands for).
//
// Model code is written once against fx::Value. Run eagerly, a Value holds a
// real value (an at::Tensor, a Python-like number, string, list, tuple, a
// torch.Size) and every operation calls straight into ATen: binary operators
// and the common methods on tensors are inline calls with one branch of
// overhead; rarer targets run through the op registry's kernel, with
// Python's argument binding. Run under a Tracer, a Value holds a Proxy (a
// Node and its Tracer) and every operation records the node torch.fx records
// for the same Python code:
//
//   C++ (model code)               Python twin             recorded target
//   a + b, a - b, a * b, a / b     a + b ...               operator.add ...
//   fx::pow(a, b), fx::matmul(a,b) a ** b, a @ b           operator.pow/matmul
//   -a, ~a, a == b, a < b, ...     -a, ~a, a == b, a < b   operator.neg, ...
//   x[0], x[{fx::slice(1, 3), 0}]  x[0], x[1:3, 0]         operator.getitem
//   x.relu(), x.clamp(...)         x.relu(), x.clamp(...)  call_method
//   x.shape(), x.dtype()           x.shape, x.dtype        builtins.getattr
//   fx::th::sum(x, "dim"_kw = -1)  torch.sum(x, dim=-1)    torch.sum
//   auto [v, i] = t.unpack<2>()    v, i = t                operator.getitem
//
// Keyword arguments are written with the `_kw` literal
// (`using namespace fx::literals;`), so the recorded args and kwargs are
// exactly those of the Python call. torch.* functions live in fx::th, and
// torch.nn.functional.* in fx::F (functions.h).
//
// What cannot be traced throws fx::TraceError with torch.fx's message: a
// traced Value used as a condition (`if (x.sum() > 0)`), or iterated
// (`for (auto v : x)`).
#ifndef FX_CORE_TRACER_PROXY_H_
#define FX_CORE_TRACER_PROXY_H_

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "fx_core/ir/node.h"
#include "fx_core/support/error.h"

namespace fx {

class Tracer;

// torch.fx's TraceError (a ValueError there): what cannot be traced.
class TraceError : public FxError {
 public:
  explicit TraceError(const std::string& message) : FxError(message) {}
};

// A Node being recorded and the Tracer recording it (torch.fx's Proxy).
struct Proxy {
  Node* node = nullptr;
  Tracer* tracer = nullptr;
};

class Value {
 public:
  enum class Kind : uint8_t {
    kConstant,      // a real value (ivalue())
    kProxy,         // a node being traced
    kList,          // a Python list of Values (items())
    kTuple,         // a Python tuple of Values
    kSlice,         // slice(start, stop, step) of Values
    kEllipsis,      // ...
    kDtype,         // torch.float32 ... (ivalue() holds the ScalarType)
    kMemoryFormat,  // torch.contiguous_format ...
    kPlaceholder,   // fx.PH, for concrete_args
  };

  // None.
  Value() = default;
  Value(std::nullptr_t) {}                       // NOLINT: None
  Value(at::Tensor t) : value_(std::move(t)) {}  // NOLINT
  template <typename T,
            std::enable_if_t<std::is_same_v<T, bool>, int> = 0>  // NOLINT
  Value(T b) : value_(b) {}                                      // NOLINT
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>,
                             int> = 0>
  Value(T i) : value_(static_cast<int64_t>(i)) {}  // NOLINT
  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Value(T f) : value_(static_cast<double>(f)) {}    // NOLINT
  Value(const char* s) : value_(std::string(s)) {}  // NOLINT
  Value(std::string s) : value_(std::move(s)) {}    // NOLINT
  Value(at::ScalarType dtype)                       // NOLINT
      : value_(static_cast<int64_t>(dtype)), kind_(Kind::kDtype) {}
  Value(at::MemoryFormat format)  // NOLINT
      : value_(static_cast<int64_t>(format)), kind_(Kind::kMemoryFormat) {}
  Value(c10::Device device) : value_(device) {}  // NOLINT
  Value(Proxy p)                                 // NOLINT
      : node_(p.node), tracer_(p.tracer), kind_(Kind::kProxy) {}
  // Any runtime value (a kernel's result).
  explicit Value(c10::IValue v) : value_(std::move(v)) {}

  // A Python list / tuple of values: fx::list({a, b}), fx::tuple({1, 1}).
  static Value list(std::vector<Value> items);
  static Value tuple(std::vector<Value> items);
  static Value slice(Value start, Value stop, Value step);
  static Value ellipsis();
  // torch.fx's PH: a concrete_args entry that stays a placeholder.
  static Value placeholder_marker();

  Kind kind() const { return kind_; }
  bool is_proxy() const { return kind_ == Kind::kProxy; }
  bool is_none() const { return kind_ == Kind::kConstant && value_.isNone(); }
  bool is_tensor() const {
    return kind_ == Kind::kConstant && value_.isTensor();
  }
  // True for a real int or float (not bool).
  bool is_number() const {
    return kind_ == Kind::kConstant && (value_.isInt() || value_.isDouble());
  }
  // The recorded node; nullptr unless is_proxy().
  Node* node() const { return node_; }
  Tracer* tracer() const { return tracer_; }
  Proxy proxy() const { return {node_, tracer_}; }

  // The real tensor. Throws TraceError for a traced value and FxError for a
  // value that is not a tensor.
  const at::Tensor& tensor() const {
    if (is_tensor()) return value_.toTensor();
    not_a_tensor();
  }
  // The real value as the runtime holds it (fx_core/runtime/value.h's
  // conventions: lists typed when homogeneous, dtypes as ints, slices as
  // capsules). Throws TraceError for a traced value.
  c10::IValue to_ivalue() const;
  // The held constant (kConstant, kDtype, kMemoryFormat).
  const c10::IValue& ivalue() const { return value_; }
  // The elements of a list, tuple or slice.
  const std::vector<Value>& items() const;

  // A number as at::Scalar (is_number() must hold).
  at::Scalar scalar() const {
    return value_.isInt() ? at::Scalar(value_.toInt())
                          : at::Scalar(value_.toDouble());
  }
  int64_t to_int() const;
  double to_double() const;
  bool to_bool() const { return static_cast<bool>(*this); }
  std::string to_string() const;

  // Python's truth value. A traced value raises TraceError ("symbolically
  // traced variables cannot be used as inputs to control flow").
  explicit operator bool() const;

  // x[i]: operator.getitem. The initializer-list form indexes with a tuple,
  // as x[1:3, 0] does: x[{fx::slice(1, 3), 0}].
  Value operator[](const Value& index) const;
  Value operator[](std::initializer_list<Value> index) const;

  // a, b = x: one getitem per element (torch.fx allows unpacking a Proxy).
  std::vector<Value> unpack(size_t n) const;
  template <size_t N>
  std::array<Value, N> unpack() const {
    std::array<Value, N> out;
    for (size_t i = 0; i < N; ++i) out[i] = (*this)[static_cast<int64_t>(i)];
    return out;
  }

  // `for (Value v : x)`: the elements of a real tensor (along dim 0), list or
  // tuple. Iterating a traced value raises TraceError ("Proxy object cannot
  // be iterated"), naming the file and line of the loop.
  class Iterator {
   public:
    Iterator(const Value* v, int64_t i) : v_(v), i_(i) {}
    Value operator*() const;
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const Iterator& o) const { return i_ != o.i_; }
    bool operator==(const Iterator& o) const { return i_ == o.i_; }

   private:
    const Value* v_;
    int64_t i_;
  };
  Iterator begin(const char* file = __builtin_FILE(),
                 int line = __builtin_LINE()) const;
  Iterator end() const;

  // Attributes (builtins.getattr): x.shape, x.dtype, x.ndim, x.T, ...
  Value shape() const { return getattr("shape"); }
  Value dtype() const { return getattr("dtype"); }
  Value device() const { return getattr("device"); }
  Value ndim() const { return getattr("ndim"); }
  Value getattr(std::string_view name) const;

  // Tensor methods (call_method). Each takes Python's positional arguments
  // and `"name"_kw = value` keyword arguments, and records them as given.
  // Common tensor cases run inline eagerly.
  Value relu() const {
    if (is_tensor()) return at::relu(tensor());
    return method0("relu");
  }
  Value sigmoid() const {
    if (is_tensor()) return at::sigmoid(tensor());
    return method0("sigmoid");
  }
  Value tanh() const {
    if (is_tensor()) return at::tanh(tensor());
    return method0("tanh");
  }
  Value exp() const {
    if (is_tensor()) return at::exp(tensor());
    return method0("exp");
  }
  Value neg() const {
    if (is_tensor()) return at::neg(tensor());
    return method0("neg");
  }
  Value contiguous() const { return method0("contiguous"); }
  Value t() const {
    if (is_tensor()) return tensor().t();
    return method0("t");
  }
  // The rest: x.method(args...), recorded as call_method.
  template <typename... A>
  Value call_method(std::string_view name, A&&... args) const;

  // Inline eager paths for the shape methods with int arguments and clamp
  // with number arguments (the common forms in model code).
  template <typename... A>
  Value clamp(A&&... args) const {
    if constexpr (sizeof...(A) >= 1 && sizeof...(A) <= 2 &&
                  (std::is_arithmetic_v<std::decay_t<A>> && ...)) {
      if (is_tensor()) return tensor().clamp(at::Scalar(args)...);
    }
    return call_method("clamp", std::forward<A>(args)...);
  }
#define FX_VALUE_INT_LIST_METHOD(NAME)                            \
  template <typename... A>                                        \
  Value NAME(A&&... args) const {                                 \
    if constexpr (sizeof...(A) >= 1 &&                            \
                  (std::is_integral_v<std::decay_t<A>> && ...)) { \
      if (is_tensor()) {                                          \
        return tensor().NAME({static_cast<int64_t>(args)...});    \
      }                                                           \
    }                                                             \
    return call_method(#NAME, std::forward<A>(args)...);          \
  }
  FX_VALUE_INT_LIST_METHOD(view)
  FX_VALUE_INT_LIST_METHOD(reshape)
  FX_VALUE_INT_LIST_METHOD(permute)
#undef FX_VALUE_INT_LIST_METHOD
#define FX_VALUE_INT_METHOD(NAME)                                           \
  template <typename... A>                                                  \
  Value NAME(A&&... args) const {                                           \
    if constexpr (sizeof...(A) >= 1 &&                                      \
                  (std::is_integral_v<std::decay_t<A>> && ...)) {           \
      if (is_tensor()) return tensor().NAME(static_cast<int64_t>(args)...); \
    }                                                                       \
    return call_method(#NAME, std::forward<A>(args)...);                    \
  }
  FX_VALUE_INT_METHOD(flatten)
  FX_VALUE_INT_METHOD(transpose)
  FX_VALUE_INT_METHOD(unsqueeze)
  FX_VALUE_INT_METHOD(size)
#undef FX_VALUE_INT_METHOD

#define FX_VALUE_METHOD(NAME)                            \
  template <typename... A>                               \
  Value NAME(A&&... args) const {                        \
    return call_method(#NAME, std::forward<A>(args)...); \
  }
  FX_VALUE_METHOD(dim)
  FX_VALUE_METHOD(numel)
  FX_VALUE_METHOD(squeeze)
  FX_VALUE_METHOD(expand)
  FX_VALUE_METHOD(expand_as)
  FX_VALUE_METHOD(view_as)
  FX_VALUE_METHOD(repeat)
  FX_VALUE_METHOD(sum)
  FX_VALUE_METHOD(mean)
  FX_VALUE_METHOD(max)
  FX_VALUE_METHOD(min)
  FX_VALUE_METHOD(argmax)
  FX_VALUE_METHOD(softmax)
  FX_VALUE_METHOD(log_softmax)
  FX_VALUE_METHOD(topk)
  FX_VALUE_METHOD(chunk)
  FX_VALUE_METHOD(split)
  FX_VALUE_METHOD(unbind)
  FX_VALUE_METHOD(select)
  FX_VALUE_METHOD(narrow)
  FX_VALUE_METHOD(add)
  FX_VALUE_METHOD(sub)
  FX_VALUE_METHOD(mul)
  FX_VALUE_METHOD(div)
  FX_VALUE_METHOD(pow)
  FX_VALUE_METHOD(matmul)
  FX_VALUE_METHOD(abs)
  FX_VALUE_METHOD(sqrt)
  FX_VALUE_METHOD(log)
  FX_VALUE_METHOD(masked_fill)
  FX_VALUE_METHOD(to)
  FX_VALUE_METHOD(type_as)
  FX_VALUE_METHOD(clone)
  FX_VALUE_METHOD(detach)
  FX_VALUE_METHOD(item)
  FX_VALUE_METHOD(tolist)
  FX_VALUE_METHOD(gather)
  FX_VALUE_METHOD(index_select)
  FX_VALUE_METHOD(cumsum)
  FX_VALUE_METHOD(where)
#undef FX_VALUE_METHOD
  // x.float(): `float` is a C++ keyword.
  Value float_() const { return method0("float"); }

 private:
  friend class Tracer;
  [[noreturn]] void not_a_tensor() const;
  Value method0(std::string_view name) const;

  c10::IValue value_;
  Node* node_ = nullptr;
  Tracer* tracer_ = nullptr;
  std::shared_ptr<const std::vector<Value>> items_;
  Kind kind_ = Kind::kConstant;
};

// Proxy(add) for a traced value (torch.fx's repr), else the real value.
std::ostream& operator<<(std::ostream& out, const Value& v);

inline Value list(std::vector<Value> items) {
  return Value::list(std::move(items));
}
inline Value tuple(std::vector<Value> items) {
  return Value::tuple(std::move(items));
}
// slice(start, stop, step); fx::slice() is `:`.
inline Value slice(Value start = {}, Value stop = {}, Value step = {}) {
  return Value::slice(std::move(start), std::move(stop), std::move(step));
}
// `...` in an index.
inline Value ellipsis() { return Value::ellipsis(); }

// ------------------------------------------------------ keyword arguments

// A keyword argument of a call: `"dim"_kw = -1` (or fx::kw("dim", -1)).
struct Kwarg {
  std::string_view name;  // the literal's text (static storage)
  Value value;
};

struct KwName {
  std::string_view name;
  template <typename T>
  Kwarg operator=(T&& v) const {  // NOLINT: builds a Kwarg
    return Kwarg{name, Value(std::forward<T>(v))};
  }
};

template <typename T>
Kwarg kw(std::string_view name, T&& v) {
  return Kwarg{name, Value(std::forward<T>(v))};
}

namespace literals {
constexpr KwName operator""_kw(const char* s, size_t n) {
  return KwName{std::string_view(s, n)};
}
}  // namespace literals

// The positional and keyword arguments of one call.
struct CallArgs {
  std::vector<Value> args;
  std::vector<Kwarg> kwargs;
};

namespace detail {
template <typename T>
void push_arg(CallArgs& c, T&& v) {
  if constexpr (std::is_same_v<std::decay_t<T>, Kwarg>) {
    c.kwargs.push_back(std::forward<T>(v));
  } else {
    c.args.emplace_back(std::forward<T>(v));
  }
}
}  // namespace detail

template <typename... A>
CallArgs pack(A&&... a) {
  CallArgs c;
  c.args.reserve(sizeof...(A));
  (detail::push_arg(c, std::forward<A>(a)), ...);
  return c;
}

// The tracer of the traced values among the arguments, or nullptr when all
// are real (the call then runs eagerly, as in torch.fx). Throws FxError when
// values of two tracers meet.
Tracer* find_tracer(const CallArgs& call);
Tracer* find_tracer(const Value& v);

// Records (when any argument is traced) or runs (through the op registry's
// kernel) a call_function / call_method. For call_method, args[0] is self.
Value call_function(std::string_view target, CallArgs call);
Value call_method(std::string_view name, CallArgs call);
// Runs a target eagerly through its op registry kernel.
Value run_eager(Opcode op, std::string_view target, const CallArgs& call);

template <typename... A>
Value Value::call_method(std::string_view name, A&&... args) const {
  return fx::call_method(name, pack(*this, std::forward<A>(args)...));
}

// ------------------------------------------------------------- operators
// Python's operators, recorded as operator.* (the reflected forms, 2 + x,
// record (2, x) as torch.fx does).

namespace detail {
Value binary(std::string_view target, const Value& a, const Value& b);
Value unary(std::string_view target, const Value& a);
}  // namespace detail

#define FX_BINARY_OPERATOR(OP, TARGET)                       \
  inline Value operator OP(const Value& a, const Value& b) { \
    if (a.is_tensor()) {                                     \
      if (b.is_tensor()) return a.tensor() OP b.tensor();    \
      if (b.is_number()) return a.tensor() OP b.scalar();    \
    }                                                        \
    return detail::binary(TARGET, a, b);                     \
  }
FX_BINARY_OPERATOR(+, "operator.add")
FX_BINARY_OPERATOR(-, "operator.sub")
FX_BINARY_OPERATOR(*, "operator.mul")
FX_BINARY_OPERATOR(/, "operator.truediv")
#undef FX_BINARY_OPERATOR

#define FX_GENERIC_BINARY_OPERATOR(OP, TARGET)               \
  inline Value operator OP(const Value& a, const Value& b) { \
    return detail::binary(TARGET, a, b);                     \
  }
FX_GENERIC_BINARY_OPERATOR(%, "operator.mod")
FX_GENERIC_BINARY_OPERATOR(<<, "operator.lshift")
FX_GENERIC_BINARY_OPERATOR(>>, "operator.rshift")
FX_GENERIC_BINARY_OPERATOR(&, "operator.and_")
FX_GENERIC_BINARY_OPERATOR(|, "operator.or_")
FX_GENERIC_BINARY_OPERATOR(^, "operator.xor")
FX_GENERIC_BINARY_OPERATOR(==, "operator.eq")
FX_GENERIC_BINARY_OPERATOR(!=, "operator.ne")
FX_GENERIC_BINARY_OPERATOR(<, "operator.lt")
FX_GENERIC_BINARY_OPERATOR(>, "operator.gt")
FX_GENERIC_BINARY_OPERATOR(<=, "operator.le")
FX_GENERIC_BINARY_OPERATOR(>=, "operator.ge")
#undef FX_GENERIC_BINARY_OPERATOR

// a ** b, a @ b, a // b (no C++ operator spells them).
inline Value pow(const Value& a, const Value& b) {
  return detail::binary("operator.pow", a, b);
}
inline Value matmul(const Value& a, const Value& b) {
  if (a.is_tensor() && b.is_tensor()) return at::matmul(a.tensor(), b.tensor());
  return detail::binary("operator.matmul", a, b);
}
inline Value floordiv(const Value& a, const Value& b) {
  return detail::binary("operator.floordiv", a, b);
}

inline Value operator-(const Value& a) {
  if (a.is_tensor()) return at::neg(a.tensor());
  return detail::unary("operator.neg", a);
}
inline Value operator+(const Value& a) {
  return detail::unary("operator.pos", a);
}
inline Value operator~(const Value& a) {
  return detail::unary("operator.invert", a);
}

// x += y rebinds x to x + y (operator.add), as torch.fx records `+=` on a
// Proxy; the eager tensor is not modified in place.
inline Value& operator+=(Value& a, const Value& b) { return a = a + b; }
inline Value& operator-=(Value& a, const Value& b) { return a = a - b; }
inline Value& operator*=(Value& a, const Value& b) { return a = a * b; }
inline Value& operator/=(Value& a, const Value& b) { return a = a / b; }

}  // namespace fx

#endif  // FX_CORE_TRACER_PROXY_H_
