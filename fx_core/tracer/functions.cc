#include "fx_core/tracer/functions.h"

#include <cmath>
#include <mutex>

#include "absl/container/flat_hash_set.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

constexpr const char* kF = "torch.nn.functional.";

Value functional(std::string_view name, CallArgs call) {
  return call_function(cat(kF, name), std::move(call));
}

struct WrappedTargets {
  std::mutex mutex;
  absl::flat_hash_set<std::string> targets;
};

WrappedTargets& wrapped_targets() {
  static WrappedTargets* w = new WrappedTargets();
  return *w;
}

// A math function: autowrapped while tracing, run on numbers eagerly.
Value math_function(std::string_view target, const Value& x) {
  CallArgs call = pack(x);
  if (Tracer* t = find_tracer(call)) {
    if (t->should_autowrap(target) || is_wrapped(target)) {
      return record_wrapped_call(*t, target, call);
    }
    throw TraceError(cat(target, "(): must be real number, not Proxy (add '",
                         target,
                         "' to the Tracer's autowrap_functions or call "
                         "fx::wrap)"));
  }
  return run_eager(Opcode::kCallFunction, target, call);
}

}  // namespace

namespace F {

Value relu(const Value& input, bool inplace) {
  if (input.is_tensor() && !inplace) return at::relu(input.tensor());
  return functional("relu", pack(input, kw("inplace", inplace)));
}
Value relu6(const Value& input, bool inplace) {
  return functional("relu6", pack(input, kw("inplace", inplace)));
}
Value silu(const Value& input, bool inplace) {
  return functional("silu", pack(input, kw("inplace", inplace)));
}
Value hardswish(const Value& input, bool inplace) {
  return functional("hardswish", pack(input, kw("inplace", inplace)));
}
Value hardsigmoid(const Value& input, bool inplace) {
  return functional("hardsigmoid", pack(input, kw("inplace", inplace)));
}
Value dropout(const Value& input, double p, bool training, bool inplace) {
  return functional("dropout", pack(input, kw("p", p), kw("training", training),
                                    kw("inplace", inplace)));
}
Value adaptive_avg_pool2d(const Value& input, const Value& output_size) {
  return functional("adaptive_avg_pool2d", pack(input, output_size));
}
Value softmax(const Value& input, const Value& dim, int64_t stacklevel,
              const Value& dtype) {
  return functional("softmax",
                    pack(input, kw("dim", dim), kw("_stacklevel", stacklevel),
                         kw("dtype", dtype)));
}
Value log_softmax(const Value& input, const Value& dim, int64_t stacklevel,
                  const Value& dtype) {
  return functional("log_softmax",
                    pack(input, kw("dim", dim), kw("_stacklevel", stacklevel),
                         kw("dtype", dtype)));
}
Value layer_norm(const Value& input, const Value& normalized_shape,
                 const Value& weight, const Value& bias, double eps) {
  return functional("layer_norm",
                    pack(input, normalized_shape, kw("weight", weight),
                         kw("bias", bias), kw("eps", eps)));
}

Value max_pool2d(const Value& input, const Value& kernel_size,
                 const Value& stride, const Value& padding,
                 const Value& dilation, bool ceil_mode, bool return_indices) {
  return functional(
      "max_pool2d",
      pack(input, kernel_size, kw("stride", stride), kw("padding", padding),
           kw("dilation", dilation), kw("ceil_mode", ceil_mode),
           kw("return_indices", return_indices)));
}
Value leaky_relu(const Value& input, double negative_slope, bool inplace) {
  return functional("leaky_relu",
                    pack(input, kw("negative_slope", negative_slope),
                         kw("inplace", inplace)));
}

}  // namespace F

namespace builtins {

Value len(const Value& x) {
  CallArgs call = pack(x);
  if (Tracer* t = find_tracer(call)) {
    if (is_wrapped("builtins.len")) {
      return record_wrapped_call(*t, "builtins.len", call);
    }
    throw FxError(
        "'len' is not supported in symbolic tracing by default. If you want "
        "this call to be recorded, please call torch.fx.wrap('len') at "
        "module scope");
  }
  if (x.is_tensor()) return x.tensor().size(0);
  return run_eager(Opcode::kCallFunction, "builtins.len", call);
}

}  // namespace builtins

namespace math {
Value sqrt(const Value& x) { return math_function("math.sqrt", x); }
Value floor(const Value& x) { return math_function("math.floor", x); }
Value ceil(const Value& x) { return math_function("math.ceil", x); }
}  // namespace math

void wrap(std::string_view target) {
  WrappedTargets& w = wrapped_targets();
  std::lock_guard<std::mutex> lock(w.mutex);
  w.targets.insert(std::string(target));
}

bool is_wrapped(std::string_view target) {
  WrappedTargets& w = wrapped_targets();
  std::lock_guard<std::mutex> lock(w.mutex);
  return w.targets.contains(std::string(target));
}

Value record_wrapped_call(Tracer& tracer, std::string_view target,
                          const CallArgs& call) {
  Value out = tracer.create_proxy(Opcode::kCallFunction, target, call.args,
                                  call.kwargs);
  out.node()->set_meta("is_wrapped", Argument(true));
  return out;
}

namespace detail {

std::string cat_arity(std::string_view target, size_t want, size_t got) {
  return cat(target, "() takes ", want, " positional arguments but ", got,
             " were given");
}

void register_wrapped_kernel(
    std::string_view target, size_t arity,
    std::function<Value(const std::vector<Value>&)> body) {
  OpRegistry& r = OpRegistry::global();
  if (r.find(Opcode::kCallFunction, target) != nullptr) return;
  std::string signature;
  for (size_t i = 0; i < arity; ++i) {
    append(&signature, i ? ", " : "", "arg", i);
  }
  r.add(Opcode::kCallFunction, target, signature,
        [body = std::move(body), arity](OpArgs& a) -> c10::IValue {
          std::vector<Value> values;
          values.reserve(arity);
          for (size_t i = 0; i < arity; ++i) values.emplace_back(a[i]);
          return body(values).to_ivalue();
        });
}

}  // namespace detail
}  // namespace fx
