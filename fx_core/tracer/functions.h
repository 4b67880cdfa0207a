// Free functions for traceable model code: torch.* (fx::th),
// torch.nn.functional.* (fx::F), Python's builtins and math (fx::builtins,
// fx::math), and fx::wrap for leaf functions.
//
// fx::th functions take Python's positional and `"name"_kw` keyword
// arguments and record them as given (torch.fx records a C function's call
// as written): th::sum(x, "dim"_kw = -1) is `torch.sum(x, dim = -1)`.
// fx::F functions take C++ parameters with Python's defaults and record what
// torch.nn.functional's Python code passes on to torch.fx (F.dropout always
// records p, training and inplace as keywords, F.relu records inplace).
//
// fx::wrap("builtins.len") makes a Python builtin recorded as one
// call_function (torch.fx.wrap("len")); fx::wrap(target, fn) makes a C++
// function a leaf function: run eagerly, recorded as one call_function
// (meta is_wrapped, so code generation writes torch.fx's wrap line) while
// tracing, and registered with the op registry so the GraphModule runs it.
#ifndef FX_CORE_TRACER_FUNCTIONS_H_
#define FX_CORE_TRACER_FUNCTIONS_H_

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "fx_core/tracer/proxy.h"
#include "fx_core/tracer/tracer.h"

namespace fx {

// torch.* functions.
namespace th {

#define FX_TORCH_FUNCTION(NAME)                                           \
  template <typename... A>                                                \
  Value NAME(A&&... args) {                                               \
    return call_function("torch." #NAME, pack(std::forward<A>(args)...)); \
  }
FX_TORCH_FUNCTION(sum)
FX_TORCH_FUNCTION(mean)
FX_TORCH_FUNCTION(topk)
FX_TORCH_FUNCTION(reshape)
FX_TORCH_FUNCTION(permute)
FX_TORCH_FUNCTION(transpose)
FX_TORCH_FUNCTION(clamp)
FX_TORCH_FUNCTION(max)
FX_TORCH_FUNCTION(min)
FX_TORCH_FUNCTION(argmax)
FX_TORCH_FUNCTION(softmax)
FX_TORCH_FUNCTION(matmul)
FX_TORCH_FUNCTION(mm)
FX_TORCH_FUNCTION(bmm)
FX_TORCH_FUNCTION(add)
FX_TORCH_FUNCTION(sub)
FX_TORCH_FUNCTION(mul)
FX_TORCH_FUNCTION(div)
FX_TORCH_FUNCTION(pow)
FX_TORCH_FUNCTION(where)
FX_TORCH_FUNCTION(chunk)
FX_TORCH_FUNCTION(split)
FX_TORCH_FUNCTION(unsqueeze)
FX_TORCH_FUNCTION(squeeze)
FX_TORCH_FUNCTION(narrow)
FX_TORCH_FUNCTION(arange)
FX_TORCH_FUNCTION(full)
FX_TORCH_FUNCTION(ones)
FX_TORCH_FUNCTION(zeros)
FX_TORCH_FUNCTION(numel)
FX_TORCH_FUNCTION(_assert)
#undef FX_TORCH_FUNCTION

// Unary functions with an inline eager path: torch.relu(x), ...
#define FX_TORCH_UNARY(NAME)                        \
  inline Value NAME(const Value& x) {               \
    if (x.is_tensor()) return at::NAME(x.tensor()); \
    return call_function("torch." #NAME, pack(x));  \
  }
FX_TORCH_UNARY(relu)
FX_TORCH_UNARY(sigmoid)
FX_TORCH_UNARY(tanh)
FX_TORCH_UNARY(neg)
FX_TORCH_UNARY(abs)
FX_TORCH_UNARY(exp)
FX_TORCH_UNARY(log)
FX_TORCH_UNARY(sqrt)
FX_TORCH_UNARY(sin)
FX_TORCH_UNARY(cos)
#undef FX_TORCH_UNARY

// torch.flatten(x, start_dim[, end_dim]): inline eagerly with int dims.
template <typename... A>
Value flatten(const Value& x, A&&... args) {
  if constexpr ((std::is_integral_v<std::decay_t<A>> && ...)) {
    if (x.is_tensor()) {
      return at::flatten(x.tensor(), static_cast<int64_t>(args)...);
    }
  }
  return call_function("torch.flatten", pack(x, std::forward<A>(args)...));
}

// torch.cat / torch.stack take a list: th::cat({a, b}, 1).
template <typename... A>
Value cat(std::initializer_list<Value> tensors, A&&... args) {
  return call_function(
      "torch.cat",
      pack(Value::list(std::vector<Value>(tensors)), std::forward<A>(args)...));
}
template <typename... A>
Value cat(const Value& tensors, A&&... args) {
  return call_function("torch.cat", pack(tensors, std::forward<A>(args)...));
}
template <typename... A>
Value stack(std::initializer_list<Value> tensors, A&&... args) {
  return call_function(
      "torch.stack",
      pack(Value::list(std::vector<Value>(tensors)), std::forward<A>(args)...));
}

}  // namespace th

// torch.nn.functional.*, recorded as torch.nn.functional's Python passes
// them to torch.fx.
namespace F {

Value relu(const Value& input, bool inplace = false);
Value relu6(const Value& input, bool inplace = false);
Value silu(const Value& input, bool inplace = false);
Value hardswish(const Value& input, bool inplace = false);
Value hardsigmoid(const Value& input, bool inplace = false);
Value dropout(const Value& input, double p = 0.5, bool training = true,
              bool inplace = false);
Value adaptive_avg_pool2d(const Value& input, const Value& output_size);
Value softmax(const Value& input, const Value& dim = {}, int64_t stacklevel = 3,
              const Value& dtype = {});
Value log_softmax(const Value& input, const Value& dim = {},
                  int64_t stacklevel = 3, const Value& dtype = {});
Value layer_norm(const Value& input, const Value& normalized_shape,
                 const Value& weight = {}, const Value& bias = {},
                 double eps = 1e-5);
Value max_pool2d(const Value& input, const Value& kernel_size,
                 const Value& stride = {}, const Value& padding = 0,
                 const Value& dilation = 1, bool ceil_mode = false,
                 bool return_indices = false);
Value leaky_relu(const Value& input, double negative_slope = 0.01,
                 bool inplace = false);

// torch.nn.functional's C functions are recorded as called, under the name
// torch.fx gives them (F.linear is torch._C._nn.linear, F.conv2d is
// torch.conv2d).
#define FX_FUNCTIONAL_BUILTIN(NAME, TARGET)                       \
  template <typename... A>                                        \
  Value NAME(A&&... args) {                                       \
    return call_function(TARGET, pack(std::forward<A>(args)...)); \
  }
FX_FUNCTIONAL_BUILTIN(linear, "torch._C._nn.linear")
FX_FUNCTIONAL_BUILTIN(gelu, "torch._C._nn.gelu")
FX_FUNCTIONAL_BUILTIN(avg_pool2d, "torch._C._nn.avg_pool2d")
FX_FUNCTIONAL_BUILTIN(conv1d, "torch.conv1d")
FX_FUNCTIONAL_BUILTIN(conv2d, "torch.conv2d")
FX_FUNCTIONAL_BUILTIN(conv3d, "torch.conv3d")
#undef FX_FUNCTIONAL_BUILTIN

}  // namespace F

// Python builtins.
namespace builtins {
// len(x): recorded only when wrapped (fx::wrap("builtins.len")); otherwise
// tracing raises torch.fx's RuntimeError.
Value len(const Value& x);
// getattr(x, "name"), as x.name records it.
inline Value getattr(const Value& x, std::string_view name) {
  return x.getattr(name);
}
}  // namespace builtins

// Python's math module: autowrapped by the default Tracer (recorded as one
// call_function, as torch.fx's autowrap_modules=(math,) does).
namespace math {
Value sqrt(const Value& x);
Value floor(const Value& x);
Value ceil(const Value& x);
}  // namespace math

// ------------------------------------------------------------------ wrap

// torch.fx.wrap for a function target known to the op registry
// ("builtins.len", "math.sqrt"): calls with traced values are recorded as
// one call_function node marked is_wrapped.
void wrap(std::string_view target);
bool is_wrapped(std::string_view target);

// Records a leaf function call: a call_function of `target` with meta
// is_wrapped, as torch.fx's wrapped functions do.
Value record_wrapped_call(Tracer& tracer, std::string_view target,
                          const CallArgs& call);

namespace detail {
template <typename T>
struct FunctionTraits : FunctionTraits<decltype(&T::operator())> {};
template <typename R, typename... P>
struct FunctionTraits<R (*)(P...)> {
  using Result = R;
  using Params = std::tuple<std::decay_t<P>...>;
  static constexpr size_t kArity = sizeof...(P);
};
template <typename R, typename C, typename... P>
struct FunctionTraits<R (C::*)(P...) const> : FunctionTraits<R (*)(P...)> {};
template <typename R, typename C, typename... P>
struct FunctionTraits<R (C::*)(P...)> : FunctionTraits<R (*)(P...)> {};

std::string cat_arity(std::string_view target, size_t want, size_t got);

template <typename Fn, typename... P, size_t... I>
Value apply_values(const Fn& fn, const std::vector<Value>& args,
                   std::tuple<P...>*, std::index_sequence<I...>) {
  return to_value(fn(value_as<P>(args[I])...));
}

// Calls fn with Values converted to its parameter types.
template <typename Fn>
Value call_with_values(const Fn& fn, std::string_view target,
                       const std::vector<Value>& args) {
  using Traits = FunctionTraits<Fn>;
  if (args.size() != Traits::kArity) {
    throw FxError(cat_arity(target, Traits::kArity, args.size()));
  }
  return apply_values(fn, args, static_cast<typename Traits::Params*>(nullptr),
                      std::make_index_sequence<Traits::kArity>{});
}
// Registers a kernel for a wrapped function unless the target has one.
void register_wrapped_kernel(
    std::string_view target, size_t arity,
    std::function<Value(const std::vector<Value>&)> body);
}  // namespace detail

namespace detail {

// A C++ function recorded as one call_function when traced, and run
// eagerly otherwise. kAlwaysRecorded: every tracer records it (wrap); else
// only a tracer that autowraps its target (autowrappable). Its kernel is
// registered, so a GraphModule runs the recorded call.
template <typename Fn, bool kAlwaysRecorded>
class LeafFunction {
 public:
  LeafFunction(std::string target, Fn fn)
      : target_(std::move(target)), fn_(std::move(fn)) {
    Fn copy = fn_;
    std::string t = target_;
    register_wrapped_kernel(target_, FunctionTraits<Fn>::kArity,
                            [copy, t](const std::vector<Value>& args) {
                              return call_with_values(copy, t, args);
                            });
  }

  template <typename... A>
  Value operator()(A&&... a) const {
    CallArgs c = pack(std::forward<A>(a)...);
    Tracer* t = find_tracer(c);
    if (t != nullptr && (kAlwaysRecorded || t->should_autowrap(target_) ||
                         is_wrapped(target_))) {
      return record_wrapped_call(*t, target_, c);
    }
    if (!c.kwargs.empty()) {
      throw FxError(target_ + ": keyword arguments are not supported");
    }
    return call_with_values(fn_, target_, c.args);
  }
  const std::string& target() const { return target_; }

 private:
  std::string target_;
  Fn fn_;
};

}  // namespace detail

// A C++ leaf function: `static const auto my_fn = fx::wrap("mylib.my_fn",
// [](at::Tensor x, at::Tensor y) { return x * x + y * y; });` then
// `my_fn(x, y)` runs eagerly, or records `mylib.my_fn(x, y)` when traced.
template <typename Fn>
using WrappedFunction = detail::LeafFunction<Fn, true>;
template <typename Fn>
WrappedFunction<Fn> wrap(std::string target, Fn fn) {
  return WrappedFunction<Fn>(std::move(target), std::move(fn));
}

// A free function written with Values that is traced through, unless the
// tracer lists its target in autowrap_functions (torch.fx's
// Tracer(autowrap_functions=(fn,))), which records it as one call_function.
//   static const auto scale_add = fx::autowrappable("mylib.scale_add",
//       [](fx::Value x, fx::Value y) { return x * 2 + y; });
template <typename Fn>
using AutowrappableFunction = detail::LeafFunction<Fn, false>;
template <typename Fn>
AutowrappableFunction<Fn> autowrappable(std::string target, Fn fn) {
  return AutowrappableFunction<Fn>(std::move(target), std::move(fn));
}

// ------------------------------------------------------ tracing functions

namespace detail {
// A free function as the root of a trace (torch.fx's symbolic_trace(fn)
// roots a function in a fresh torch.nn.Module).
template <typename Fn>
class FunctionRoot : public TraceableModule {
 public:
  FunctionRoot(std::string name, std::string signature, Fn fn)
      : TraceableModule(std::move(signature), std::move(name)),
        fn_(std::move(fn)) {}
  Value call_forward(const std::vector<Value>& args) override {
    using Traits = FunctionTraits<Fn>;
    if (args.size() != Traits::kArity) {
      wrong_arity(name(), Traits::kArity, args.size());
    }
    return apply(args, static_cast<typename Traits::Params*>(nullptr),
                 std::make_index_sequence<Traits::kArity>{});
  }
  size_t forward_arity() const override { return FunctionTraits<Fn>::kArity; }

 private:
  template <typename... P, size_t... I>
  Value apply(const std::vector<Value>& args, std::tuple<P...>*,
              std::index_sequence<I...>) {
    return to_value(fn_(from_value<P>(args[I], *this, I)...));
  }
  Fn fn_;
};
}  // namespace detail

// Traces a free function, as torch.fx's symbolic_trace(fn) does: `name` is
// the GraphModule's class name (fn.__name__), `signature` its parameters
// ("x, flag"); parameters of C++ types (bool, int, ...) need concrete_args.
//
//   auto gm = fx::symbolic_trace_function("f", "x, flag",
//       [](fx::Value x, bool flag) { return flag ? x : x * 2; },
//       {{"flag", true}});
template <typename Fn>
std::shared_ptr<GraphModule> symbolic_trace_function(
    std::string name, std::string signature, Fn fn,
    const ConcreteArgs& concrete_args = {}, Tracer* tracer = nullptr) {
  detail::FunctionRoot<Fn> root(name, std::move(signature), std::move(fn));
  return symbolic_trace(root, concrete_args, tracer, name);
}

}  // namespace fx

#endif  // FX_CORE_TRACER_FUNCTIONS_H_
