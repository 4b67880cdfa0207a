// fx::Tracer and fx::symbolic_trace: torch.fx's symbolic tracer for C++
// modules.
//
//   using namespace fx::literals;  // "min"_kw = 0.0
//   struct MyModule : fx::Module<MyModule> {
//     MyModule() {
//       param = register_parameter("param", at::rand({3, 4}));
//       linear = register_module("linear", torch::nn::Linear(4, 5));
//     }
//     fx::Value forward(fx::Value x) {
//       return linear(x + param).clamp("min"_kw = 0.0, "max"_kw = 1.0);
//     }
//     at::Tensor param;
//     fx::Submodule<torch::nn::Linear> linear;
//   };
//
//   MyModule m;
//   at::Tensor y = m.forward(x).tensor();                // eager, real tensors
//   std::shared_ptr<fx::GraphModule> gm = fx::symbolic_trace(m);  // traced
//
// Tracing runs forward on Proxies and records what happens, as torch.fx does:
//  - forward's parameters become placeholders, named by the module's
//    signature ("x", "x, flag=None", "x : torch.Tensor -> torch.Tensor");
//  - standard torch::nn modules (and any C++ module that is not an
//    fx::Module) are leaves: call_module with their qualified path. fx::Module
//    children, torch::nn::Sequential, fx::Sequential, ModuleList and
//    ModuleDict are traced through (call children with fx::Submodule members
//    or fx::call);
//  - parameters and buffers used as values become get_attr (`linear.weight`
//    named `linear_weight`; a parameter's node is reused, as torch.fx's
//    parameter proxy cache does); other real tensors become
//    `_tensor_constantN` attributes of the GraphModule;
//  - concrete_args specialise parameters (with torch.fx's placeholder and
//    assertion nodes); fx::PH keeps one a placeholder.
// A Tracer subclass overrides is_leaf_module, call_module, create_node,
// create_proxy, create_arg, to_bool and iter, as in torch.fx.
//
// Tracing is linear in the size of the program: O(1) work per recorded node.
#ifndef FX_CORE_TRACER_TRACER_H_
#define FX_CORE_TRACER_TRACER_H_

#include <torch/nn/module.h>
#include <torch/nn/modules/container/moduledict.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/container/sequential.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <typeindex>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/tracer/proxy.h"

namespace fx {

// ------------------------------------------------------------ signatures

// One parameter of forward's Python signature.
struct ForwardParam {
  std::string name;
  std::string type;  // annotation as code spells it ("torch.Tensor"), or ""
  std::optional<Argument> default_value;
};

// forward's Python signature: "x", "x, flag=None",
// "x : torch.Tensor -> torch.Tensor". Defaults are Python literals (None,
// True, False, ints, floats, 'strings').
struct ForwardSignature {
  std::vector<ForwardParam> params;
  std::string return_type;
  // Throws FxError naming the text and the problem.
  static ForwardSignature parse(std::string_view text);
};

// ---------------------------------------------------------------- modules

// The non-template base of traceable modules (see fx::Module).
class TraceableModule : public torch::nn::Module {
 public:
  // `signature`: forward's parameters (see ForwardSignature); empty means
  // "x" for a one-parameter forward.
  explicit TraceableModule(std::string signature = {});
  // Also names the module (torch::nn::Module::name()).
  TraceableModule(std::string signature, std::string module_name);
  ~TraceableModule() override;

  // Calls forward with type-erased values (what the tracer and containers
  // use). Throws FxError for a wrong number of values, TraceError for a
  // traced value given to a parameter that is not a Value (bool, int, ...).
  virtual Value call_forward(const std::vector<Value>& args) = 0;
  virtual size_t forward_arity() const = 0;

  const ForwardSignature& signature() const;

  // `self.weight` as torch.fx sees it: while tracing, a parameter of the
  // traced root becomes its get_attr proxy here, where it is read (torch.fx's
  // module __getattr__ hook), rather than where it is first used; anything
  // else (buffers, plain tensors, eager runs) stays the real tensor.
  Value attr(const at::Tensor& tensor) const;

 private:
  std::string signature_text_;
  mutable std::unique_ptr<ForwardSignature> signature_;
};

namespace detail {
// A Value as a C++ parameter of type T takes it (functions.h's wrapped
// functions, and from_value below once a proxy is refused).
template <typename T>
T value_as(const Value& v) {
  if constexpr (std::is_same_v<T, Value>) {
    return v;
  } else if constexpr (std::is_same_v<T, bool>) {
    return v.to_bool();
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(v.to_int());
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v.to_double());
  } else if constexpr (std::is_same_v<T, std::string>) {
    return v.to_string();
  } else if constexpr (std::is_same_v<T, at::Tensor>) {
    return v.tensor();
  } else {
    return v.to_ivalue().template to<T>();
  }
}
// A Value given to a C++ parameter of type T.
[[noreturn]] void traced_concrete_param(const TraceableModule& m, size_t index,
                                        const Value& v);
template <typename T>
T from_value(const Value& v, const TraceableModule& m, size_t index) {
  if constexpr (std::is_same_v<T, Value>) {
    return v;
  } else {
    if (v.is_proxy()) traced_concrete_param(m, index, v);
    return value_as<T>(v);
  }
}
[[noreturn]] void wrong_arity(std::string_view module, size_t want, size_t got);
template <typename T>
struct IsTuple : std::false_type {};
template <typename... T>
struct IsTuple<std::tuple<T...>> : std::true_type {};
template <typename R>
Value to_value(R&& r);
template <typename Tuple, size_t... I>
Value tuple_to_value(const Tuple& t, std::index_sequence<I...>) {
  return Value::tuple({to_value(std::get<I>(t))...});
}
// A C++ result as a Value: std::tuple (LibTorch modules returning several
// tensors) becomes a Python tuple, std::vector<Value> a list.
template <typename R>
Value to_value(R&& r) {
  using D = std::decay_t<R>;
  if constexpr (std::is_same_v<D, Value>) {
    return std::forward<R>(r);
  } else if constexpr (IsTuple<D>::value) {
    return tuple_to_value(r, std::make_index_sequence<std::tuple_size_v<D>>{});
  } else if constexpr (std::is_same_v<D, std::vector<Value>>) {
    return Value::list(std::forward<R>(r));
  } else {
    return Value(std::forward<R>(r));
  }
}
}  // namespace detail

// A traceable module: derive as `struct M : fx::Module<M>` and define one
// `forward` taking fx::Value (or bool/int/double/std::string parameters,
// which tracing fills from concrete_args) and returning fx::Value.
template <typename Derived>
class Module : public TraceableModule {
 public:
  using TraceableModule::TraceableModule;

  Value call_forward(const std::vector<Value>& args) override {
    return invoke(&Derived::forward, args);
  }
  size_t forward_arity() const override { return arity(&Derived::forward); }

 private:
  template <typename R, typename C, typename... P>
  static constexpr size_t arity(R (C::*)(P...)) {
    return sizeof...(P);
  }
  template <typename R, typename C, typename... P>
  static constexpr size_t arity(R (C::*)(P...) const) {
    return sizeof...(P);
  }
  template <typename F, typename... P, size_t... I>
  Value invoke_impl(F f, const std::vector<Value>& args, std::tuple<P...>*,
                    std::index_sequence<I...>) {
    return detail::to_value((static_cast<Derived*>(this)->*f)(
        detail::from_value<std::decay_t<P>>(args[I], *this, I)...));
  }
  template <typename R, typename C, typename... P>
  Value invoke(R (C::*f)(P...), const std::vector<Value>& args) {
    if (args.size() != sizeof...(P)) {
      detail::wrong_arity(name(), sizeof...(P), args.size());
    }
    return invoke_impl(f, args, static_cast<std::tuple<P...>*>(nullptr),
                       std::index_sequence_for<P...>{});
  }
  template <typename R, typename C, typename... P>
  Value invoke(R (C::*f)(P...) const, const std::vector<Value>& args) {
    if (args.size() != sizeof...(P)) {
      detail::wrong_arity(name(), sizeof...(P), args.size());
    }
    return invoke_impl(f, args, static_cast<std::tuple<P...>*>(nullptr),
                       std::index_sequence_for<P...>{});
  }
};

// ----------------------------------------------------------------- Tracer

// Parameters specialised to values; fx::PH keeps a parameter a placeholder.
using ConcreteArgs = std::vector<std::pair<std::string, Value>>;
extern const Value PH;

// The forward of the module a call_module is about: the tracer calls it to
// trace through the module.
using ModuleForward = std::function<Value(const std::vector<Value>& args,
                                          const std::vector<Kwarg>& kwargs)>;

class Tracer {
 public:
  Tracer();
  virtual ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // Traces root.forward and returns the graph. Throws TraceError (what
  // cannot be traced), FxError (misuse). Not reentrant on one Tracer.
  std::unique_ptr<Graph> trace(TraceableModule& root,
                               const ConcreteArgs& concrete_args = {});

  // ----- the hooks torch.fx's Tracer has
  // True when calls to `m` are recorded as call_module rather than traced
  // through. Default: modules whose type was registered with
  // register_leaf_module, and every module that is neither an fx::Module nor
  // a container (Sequential, ModuleList, ModuleDict).
  virtual bool is_leaf_module(const torch::nn::Module& m,
                              std::string_view module_qualified_name) const;
  // A call of submodule `m`: a call_module node for a leaf, else forward.
  virtual Value call_module(torch::nn::Module& m, const ModuleForward& forward,
                            const std::vector<Value>& args,
                            const std::vector<Kwarg>& kwargs);
  virtual Node* create_node(Opcode op, std::string_view target, Node::Args args,
                            Node::Kwargs kwargs,
                            std::optional<std::string_view> name = {},
                            std::string_view type = {});
  virtual Value create_proxy(Opcode op, std::string_view target,
                             const std::vector<Value>& args,
                             const std::vector<Kwarg>& kwargs,
                             std::optional<std::string_view> name = {},
                             std::string_view type = {});
  // A Value as a node argument: proxies become their node, real tensors
  // get_attr nodes (parameters, buffers, tensor constants), lists, tuples and
  // slices element by element.
  virtual Argument create_arg(const Value& v);
  // A traced value used as a condition / iterated: TraceError by default.
  virtual bool to_bool(const Value& proxy);
  // `file` and `line` are where the loop is. Must throw (C++ range-for has
  // no place for an iterator the tracer would make up).
  virtual void iter(const Value& proxy, const char* file, int line);

  // The qualified path of a submodule of root ("layer1.0.conv1"). Throws
  // FxError "module is not installed as a submodule".
  std::string path_of_module(const torch::nn::Module& m) const;

  // Function targets this tracer records as one call_function (torch.fx's
  // autowrap_functions); "math" functions are autowrapped by default
  // (autowrap_modules=(math,)).
  std::vector<std::string> autowrap_modules = {"math"};
  std::vector<std::string> autowrap_functions;
  bool should_autowrap(std::string_view target) const;

  // Shapes of placeholders (by parameter name), recorded as their nodes'
  // meta "shape"; custom ops' shape functions propagate them (extensions.h).
  std::vector<std::pair<std::string, std::vector<int64_t>>> placeholder_shapes;

  // The graph being recorded into.
  Graph& graph() { return *target_graph_; }
  torch::nn::Module& root() { return *root_; }
  // The get_attr proxy of a parameter of root (torch.fx's parameter proxy
  // cache), or nullopt for a tensor that is not one.
  std::optional<Value> parameter_proxy(const at::Tensor& tensor);

  // Real tensors that became `_tensor_constantN` attributes.
  const std::vector<std::pair<std::string, at::Tensor>>& tensor_constants()
      const {
    return tensor_constants_;
  }

  // The tracer tracing on this thread, or nullptr.
  static Tracer* current();

 private:
  friend class ActiveTracer;
  friend class GraphAppendingTracer;
  Value placeholder_for(const ForwardParam& p, const Value* concrete,
                        bool* substituted);

  std::unique_ptr<Graph> graph_;
  Graph* target_graph_ = nullptr;  // graph_, or a GraphAppendingTracer's
  TraceableModule* root_ = nullptr;
  absl::flat_hash_map<const torch::nn::Module*, std::string> module_paths_;
  struct TensorAttr {
    std::string name;
    bool is_parameter = false;
    Node* cached = nullptr;  // a parameter's get_attr node
  };
  absl::flat_hash_map<const c10::TensorImpl*, TensorAttr> tensor_attrs_;
  std::vector<std::pair<std::string, at::Tensor>> tensor_constants_;
  std::string module_context_;  // the module whose forward is being traced
};

// torch.fx's GraphAppendingTracer: operations on Values wrapping nodes of an
// existing graph append to that graph. For transforms written as Python-like
// code (the docs' decomposition example):
//   fx::GraphAppendingTracer tracer(new_graph);
//   fx::Value x = fx::Proxy{node, &tracer};
//   fx::Node* decomposed = ((x > 0) * x).node();
// Real tensors cannot become arguments (there is no module to hold them).
class GraphAppendingTracer : public Tracer {
 public:
  explicit GraphAppendingTracer(Graph& graph);
};

// Leaf module types registered by code outside fx_core (vendors): their
// calls are recorded as call_module even when they are fx::Modules.
void register_leaf_module(std::type_index type);
template <typename M>
void register_leaf_module() {
  register_leaf_module(std::type_index(typeid(M)));
}
bool is_registered_leaf_module(const torch::nn::Module& m);

// Traces `root` with `tracer` (a default Tracer when null) and builds the
// GraphModule, named after root's class, as torch.fx's symbolic_trace does.
// `class_name` overrides the name (torch.fx names a traced function's
// GraphModule after the function).
std::shared_ptr<GraphModule> symbolic_trace(
    TraceableModule& root, const ConcreteArgs& concrete_args = {},
    Tracer* tracer = nullptr, std::string class_name = {});

// ------------------------------------------------------ calling submodules

namespace detail {
// A Value passed to a LibTorch module's forward when running eagerly.
struct EagerArg {
  const Value& v;
  operator const at::Tensor&() const { return v.tensor(); }  // NOLINT
  operator int64_t() const { return v.to_int(); }            // NOLINT
  operator double() const { return v.to_double(); }          // NOLINT
};
template <typename T>
decltype(auto) eager_arg(T&& a) {
  if constexpr (std::is_same_v<std::decay_t<T>, Value>) {
    return EagerArg{a};
  } else {
    return std::forward<T>(a);
  }
}
template <typename H>
struct IsSharedPtr : std::false_type {};
template <typename M>
struct IsSharedPtr<std::shared_ptr<M>> : std::true_type {};
template <typename H>
auto module_ptr(const H& h) {
  if constexpr (IsSharedPtr<H>::value) {
    return h;  // std::shared_ptr<M>
  } else {
    return h.ptr();  // torch::nn::ModuleHolder<M>
  }
}
// Calls a type-erased submodule (Sequential's children, ModuleList items).
Value forward_erased(torch::nn::Module& m, const std::vector<Value>& args,
                     const std::vector<Kwarg>& kwargs);
Value call_sequential(torch::nn::SequentialImpl& seq, const CallArgs& call);
}  // namespace detail

// Calls submodule `m` (a ModuleHolder such as torch::nn::Linear, a
// std::shared_ptr to a module, or a module) with Values: eagerly its forward,
// while tracing through Tracer::call_module.
template <typename M, typename... A>
Value call_module_impl(M& m, A&&... a) {
  Tracer* t = Tracer::current();
  if constexpr (std::is_base_of_v<TraceableModule, M>) {
    if (t == nullptr) {
      return detail::to_value(m.forward(std::forward<A>(a)...));
    }
    CallArgs c = pack(std::forward<A>(a)...);
    return t->call_module(
        m,
        [&m](const std::vector<Value>& args, const std::vector<Kwarg>&) {
          return m.call_forward(args);
        },
        c.args, c.kwargs);
  } else if constexpr (std::is_same_v<M, torch::nn::SequentialImpl>) {
    return detail::call_sequential(m, pack(std::forward<A>(a)...));
  } else if constexpr (std::is_same_v<M, torch::nn::Module>) {
    CallArgs c = pack(std::forward<A>(a)...);
    if (t == nullptr) return detail::forward_erased(m, c.args, c.kwargs);
    return t->call_module(
        m,
        [&m](const std::vector<Value>& args, const std::vector<Kwarg>& kw) {
          return detail::forward_erased(m, args, kw);
        },
        c.args, c.kwargs);
  } else {
    if (t == nullptr) {
      return detail::to_value(m.forward(detail::eager_arg(a)...));
    }
    CallArgs c = pack(std::forward<A>(a)...);
    return t->call_module(
        m,
        [&m](const std::vector<Value>& args, const std::vector<Kwarg>& kw) {
          return detail::forward_erased(m, args, kw);
        },
        c.args, c.kwargs);
  }
}

template <typename H, typename... A>
Value call(const H& holder, A&&... a) {
  if constexpr (std::is_base_of_v<torch::nn::Module, H>) {
    return call_module_impl(const_cast<H&>(holder), std::forward<A>(a)...);
  } else {
    auto ptr = detail::module_ptr(holder);
    return call_module_impl(*ptr, std::forward<A>(a)...);
  }
}

// A submodule member that is called like a Python submodule: `linear(x)`.
// H is a ModuleHolder (torch::nn::Linear) or std::shared_ptr<M>.
template <typename H>
class Submodule {
 public:
  Submodule() = default;
  Submodule(std::nullptr_t) {}                         // NOLINT
  Submodule(H holder) : holder_(std::move(holder)) {}  // NOLINT
  Submodule& operator=(H holder) {
    holder_ = std::move(holder);
    return *this;
  }
  auto operator->() const { return &*detail::module_ptr(holder_); }
  auto& operator*() const { return *detail::module_ptr(holder_); }
  const H& holder() const { return holder_; }

  template <typename... A>
  Value operator()(A&&... a) const {
    return fx::call(holder_, std::forward<A>(a)...);
  }

 private:
  H holder_{nullptr};
};

// torch.nn.Sequential for traceable code: children named "0", "1", ...
// called in order, traced through as torch.fx traces a Sequential. Unlike
// torch::nn::Sequential (which tracing also supports), it nests: torchvision's
// Conv2dNormActivation is a Sequential inside a Sequential.
class SequentialImpl : public Module<SequentialImpl> {
 public:
  SequentialImpl() = default;
  template <typename... M>
  explicit SequentialImpl(M&&... modules) {
    (push_back(std::forward<M>(modules)), ...);
  }
  // Appends a module (a ModuleHolder or a std::shared_ptr to a module).
  template <typename H>
  void push_back(const H& module) {
    auto ptr = detail::module_ptr(module);
    using M = typename decltype(ptr)::element_type;
    register_module(std::to_string(size_++), ptr);
    // LibTorch modules also run eagerly through their own forward (no op
    // registry entry needed).
    if constexpr (!std::is_base_of_v<TraceableModule, M> &&
                  torch::detail::has_forward<M>::value) {
      eager_.emplace_back(ptr);
    } else {
      eager_.emplace_back();
    }
  }
  size_t size() const { return size_; }
  Value forward(Value x);

 private:
  size_t size_ = 0;
  std::vector<torch::nn::AnyModule> eager_;
};
using Sequential = std::shared_ptr<SequentialImpl>;

template <typename... M>
Sequential sequential(M&&... modules) {
  return std::make_shared<SequentialImpl>(std::forward<M>(modules)...);
}

}  // namespace fx

#endif  // FX_CORE_TRACER_TRACER_H_
