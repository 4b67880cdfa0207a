// Extension points for vendors (code outside fx_core, such as a backend's
// plugin host): leaf module types (tracer.h: register_leaf_module), custom
// ops recorded as call_function nodes, and named tracer policies.
//
//   // A vendor op: a kernel for eager runs and GraphModules, and a shape
//   // function for tracing without running it.
//   static const fx::CustomOp fused = fx::register_custom_op({
//       "vendor.fused_bias_relu", "input, bias",
//       [](fx::OpArgs& a) -> c10::IValue {
//         return at::relu(a.tensor(0) + a.tensor(1));
//       },
//       [](const fx::ShapeArgs& in) { return in.shapes[0]; }});
//   fx::Value y = fused(x, bias);   // eager: the kernel; traced: one node
//
//   fx::register_tracer_policy("vendor", [] {
//     return std::make_unique<VendorTracer>();  // leaves, autowrap, hooks
//   });
//   auto gm = fx::symbolic_trace(model, {}, fx::make_tracer("vendor").get());
//
// While tracing, a custom op's node gets meta "shape" (a list of ints) from
// its shape function when every traced tensor input has one; placeholders
// get one from Tracer::placeholder_shapes.
#ifndef FX_CORE_TRACER_EXTENSIONS_H_
#define FX_CORE_TRACER_EXTENSIONS_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <typeindex>
#include <utility>
#include <vector>

#include "fx_core/runtime/op_registry.h"
#include "fx_core/tracer/functions.h"
#include "fx_core/tracer/proxy.h"
#include "fx_core/tracer/tracer.h"

namespace fx {

// What a shape function sees: the shapes of the op's tensor arguments (in
// argument order) and the call's arguments themselves.
struct ShapeArgs {
  std::vector<std::vector<int64_t>> shapes;
  const CallArgs* call = nullptr;
};
using ShapeFunction =
    std::function<std::vector<int64_t>(const ShapeArgs& inputs)>;

struct CustomOpDef {
  std::string target;     // "vendor.fused_bias_relu"
  std::string signature;  // Python signature: "input, bias"
  OpKernel kernel;        // runs eagerly and in GraphModules
  ShapeFunction shape;    // optional: the output's shape from the inputs'
};

// A registered custom op: calling it runs the kernel on real values, or
// records one call_function node of `target` while tracing.
class CustomOp {
 public:
  explicit CustomOp(std::string target) : target_(std::move(target)) {}
  template <typename... A>
  Value operator()(A&&... args) const {
    return call(pack(std::forward<A>(args)...));
  }
  Value call(CallArgs args) const;
  const std::string& target() const { return target_; }

 private:
  std::string target_;
};

// Registers the kernel with the op registry (replacing an entry of the same
// target) and the shape function. Throws FxError for a bad signature.
CustomOp register_custom_op(CustomOpDef def);
// The shape function registered for `target`, or nullptr.
const ShapeFunction* find_shape_function(std::string_view target);

// Registers M as a leaf module type (register_leaf_module) that GraphModules
// can also run: its Python class name (`vendor.nn.FusedBlock`, as graph
// files and to_folder spell it) and forward's Python signature ("input").
// An fx::Module runs through call_forward; any other module M needs one
// non-overloaded forward whose parameters are at::Tensor, numbers, bool or
// std::string.
template <typename M>
void register_leaf_module_kind(std::string python_type,
                               std::string forward_signature = "input");

// Named tracer policies: factories of configured Tracers.
using TracerFactory = std::function<std::unique_ptr<Tracer>()>;
void register_tracer_policy(std::string name, TracerFactory factory);
// A new tracer of policy `name` ("default" is a plain Tracer). Throws
// FxError naming the known policies for an unknown name.
std::unique_ptr<Tracer> make_tracer(std::string_view name);
std::vector<std::string> tracer_policies();

namespace detail {
void add_leaf_module_kind(
    std::string python_type, std::type_index cpp_type,
    std::string forward_signature,
    std::function<Value(torch::nn::Module&, const std::vector<Value>&)>
        forward);

template <typename M, typename R, typename... P, size_t... I>
Value call_typed_forward(M& m, R (M::*f)(P...), const std::vector<Value>& args,
                         std::index_sequence<I...>) {
  return to_value((m.*f)(value_as<std::decay_t<P>>(args[I])...));
}
template <typename M, typename R, typename... P>
Value call_typed_forward(M& m, R (M::*f)(P...),
                         const std::vector<Value>& args) {
  if (args.size() != sizeof...(P)) {
    throw FxError(cat_arity(m.name() + ".forward", sizeof...(P), args.size()));
  }
  return call_typed_forward(m, f, args, std::index_sequence_for<P...>{});
}
}  // namespace detail

template <typename M>
void register_leaf_module_kind(std::string python_type,
                               std::string forward_signature) {
  register_leaf_module<M>();
  detail::add_leaf_module_kind(
      std::move(python_type), std::type_index(typeid(M)),
      std::move(forward_signature),
      [](torch::nn::Module& m, const std::vector<Value>& args) -> Value {
        if constexpr (std::is_base_of_v<TraceableModule, M>) {
          return static_cast<M&>(m).call_forward(args);
        } else {
          return detail::call_typed_forward(static_cast<M&>(m), &M::forward,
                                            args);
        }
      });
}

}  // namespace fx

#endif  // FX_CORE_TRACER_EXTENSIONS_H_
