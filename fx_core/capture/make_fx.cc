#include "fx_core/capture/make_fx.h"

#include <ATen/Functions.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/SafePyObject.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/core/impl/PyInterpreter.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>
#include <torch/library.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "fx_core/capture/capture_extensions.h"
#include "fx_core/capture/front_end.h"
#include "fx_core/capture/meta_rules.h"
#include "fx_core/capture/python_kernels.h"
#include "fx_core/capture/symbolic_capture.h"
#include "fx_core/capture/symbolic_tensor.h"
#include "fx_core/ir/argument.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"

namespace fx {
namespace {

using c10::DispatchKey;
using c10::DispatchKeySet;
using c10::TensorImpl;

// The keys a torch_dispatch mode needs included: the snapshot key (highest)
// records the thread's dispatch state on entry; the Python key (just above
// the backends, below autograd) is where the mode is called.
const DispatchKeySet kPythonKeys =
    DispatchKeySet({DispatchKey::Python, DispatchKey::PythonTLSSnapshot});
// Above autograd: sees the calls the user's code makes, before autograd's
// composite kernels decompose them (make_fx's spelling of those calls).
constexpr DispatchKey kUserCallKey = DispatchKey::TESTING_ONLY_GenericMode;
const DispatchKeySet kCaptureKeys = kPythonKeys | DispatchKeySet(kUserCallKey);

// The C++-only overloads (native_functions.yaml: "For C++ only") a number
// reaches from C++ (`x + 2`), and the overload Python's argument parser
// picks for the same call (a number wrapped as a tensor).
const absl::flat_hash_map<std::string, std::string>& python_overloads() {
  static const auto* overloads =
      new absl::flat_hash_map<std::string, std::string>{
          {"aten::add.Scalar", "Tensor"},
          {"aten::add_.Scalar", "Tensor"},
          {"aten::sub.Scalar", "Tensor"},
          {"aten::sub_.Scalar", "Tensor"},
          {"aten::mul.Scalar", "Tensor"},
          {"aten::mul_.Scalar", "Tensor"},
          {"aten::div.Scalar", "Tensor"},
          {"aten::div_.Scalar", "Tensor"},
          {"aten::div.Scalar_mode", "Tensor_mode"},
          {"aten::div_.Scalar_mode", "Tensor_mode"},
      };
  return *overloads;
}

std::string layout_name(c10::Layout layout) {
  switch (layout) {
    case c10::kStrided:
      return "torch.strided";
    case c10::kSparse:
      return "torch.sparse_coo";
    case c10::kSparseCsr:
      return "torch.sparse_csr";
    case c10::kMkldnn:
      return "torch._mkldnn";
    default:
      throw FxError("make_fx: cannot record layout " +
                    std::string(c10::toString(layout)));
  }
}

std::string memory_format_name(c10::MemoryFormat format) {
  switch (format) {
    case c10::MemoryFormat::Contiguous:
      return "torch.contiguous_format";
    case c10::MemoryFormat::Preserve:
      return "torch.preserve_format";
    case c10::MemoryFormat::ChannelsLast:
      return "torch.channels_last";
    case c10::MemoryFormat::ChannelsLast3d:
      return "torch.channels_last_3d";
    default:
      throw FxError("make_fx: cannot record this memory format");
  }
}

// True when the schema argument's type (or its Optional's element) is `kind`.
bool has_kind(const c10::Argument& arg, c10::TypeKind kind) {
  const auto& type = arg.real_type();
  if (type->kind() == kind) return true;
  if (auto optional = type->cast<c10::OptionalType>()) {
    return optional->getElementType()->kind() == kind;
  }
  return false;
}

// The options' tracing mode, make_fx's names; `meta` is "fake".
std::string tracing_mode(const MakeFxOptions& options) {
  const std::string& mode = options.tracing_mode;
  if (mode != "real" && mode != "fake" && mode != "symbolic") {
    throw FxError("make_fx: tracing_mode is \"" + mode +
                  "\"; it takes \"real\", \"fake\" or \"symbolic\"");
  }
  return mode == "real" && options.meta ? "fake" : mode;
}

// One capture: the graph being built and what each tensor is in it.
class Recorder {
 public:
  Recorder(Graph& graph, const MakeFxOptions& options)
      : graph_(graph),
        meta_(options.meta || tracing_mode(options) != "real"),
        allow_data_dependent_(options.allow_data_dependent) {
    for (const auto& [name, decomposition] : options.decompositions) {
      decompositions_[&find_schema(name)] = decomposition;
    }
    for (const auto& name : options.leaf_ops) {
      leaf_ops_.insert(&find_schema(name));
    }
    if (options.registered_extensions) add_registered_extensions();
    const torch::nn::Module* module = options.module;
    if (module != nullptr) {
      has_module_ = true;
      for (const auto& p : module->parameters(/*recurse=*/true)) {
        parameters_.insert(p.unsafeGetTensorImpl());
      }
    }
  }

  // The plugins' decompositions and leaf operators, where the options give
  // the operator neither.
  void add_registered_extensions() {
    capture::RegisteredExtensions registered = capture::registered_extensions();
    for (auto& [name, decomposition] : registered.decompositions) {
      const c10::FunctionSchema* schema = &find_schema(name);
      if (leaf_ops_.contains(schema)) continue;
      decompositions_.try_emplace(schema, std::move(decomposition));
    }
    for (const auto& name : registered.leaf_ops) {
      const c10::FunctionSchema* schema = &find_schema(name);
      if (!decompositions_.contains(schema)) leaf_ops_.insert(schema);
    }
  }

  // Symbolic mode (symbolic_capture.h): tensors with symbolic sizes.
  void set_symbolic(std::shared_ptr<capture::SymbolicCapture> symbolic) {
    symbolic_ = std::move(symbolic);
  }

  // The node `tensor` stands for, or nullptr when it is not tracked.
  Node* tracked(const TensorImpl* tensor) const {
    auto found = nodes_.find(tensor);
    return found == nodes_.end() ? nullptr : found->second;
  }

  void track(const at::Tensor& tensor, Node* node) {
    nodes_[tensor.unsafeGetTensorImpl()] = node;
    if (symbolic_) symbolic_->retrack(tensor);
    // Kept alive for the capture, so no later tensor reuses the address.
    alive_.push_back(tensor);
  }

  // The node standing for `tensor`: the one that produced it, or a new
  // get_attr of the attribute holding it (created at first use).
  Node* node_for(const at::Tensor& tensor) {
    auto found = nodes_.find(tensor.unsafeGetTensorImpl());
    if (found != nodes_.end()) return found->second;
    auto& name = attribute_names_[tensor.unsafeGetTensorImpl()];
    if (name.empty()) {
      bool parameter = is_parameter(tensor);
      name = (parameter ? "_param_constant" : "_tensor_constant") +
             std::to_string(parameter ? params_++ : tensors_++);
      constants_.push_back({name, tensor, parameter});
      alive_.push_back(tensor);
    }
    return graph_.get_attr(name);
  }

  // The torch_dispatch mode's body: decompose or record, then run.
  void dispatch(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
    if (!decompositions_.empty()) {
      auto found = decompositions_.find(&op.schema());
      if (found != decompositions_.end()) {
        if (run_kernel(op, found->second, stack)) return;
      }
    }
    if (const capture::PythonKernel* kernel =
            capture::find_python_kernel(op.schema())) {
      // Python's own composite kernel, as make_fx's func.decompose() runs.
      if (run_kernel(op, *kernel, stack)) return;
    }
    if (op.hasKernelForDispatchKey(DispatchKey::CompositeImplicitAutograd)) {
      // As make_fx's func.decompose(): the composite kernel runs with the
      // mode still on, so the operators it calls are recorded.
      op.callBoxedForDispatchKey(DispatchKey::CompositeImplicitAutograd,
                                 *stack);
      return;
    }
    record(op, stack, /*spell_as_python=*/true);
  }

  bool is_leaf(const c10::FunctionSchema* schema) const {
    return !leaf_ops_.empty() && leaf_ops_.contains(schema);
  }

  // Records `op` as one node and runs it with nothing below recorded.
  void record(const c10::OperatorHandle& op, torch::jit::Stack* stack,
              bool spell_as_python) {
    const auto& schema = op.schema();
    const size_t base = stack->size() - schema.arguments().size();
    if (!allow_data_dependent_ && reads_data(schema)) {
      for (size_t i = base; i < stack->size(); ++i) {
        const c10::IValue& value = (*stack)[i];
        if (value.isTensor() &&
            nodes_.contains(value.toTensor().unsafeGetTensorImpl())) {
          throw FxError(
              "make_fx: " + schema.name() +
              " reads the value of a captured tensor (item(), a comparison "
              "used as a bool, ...): the graph would bake it in, and any "
              "branch taken on it. Set MakeFxOptions::allow_data_dependent "
              "to record it as make_fx 1.13 does.");
        }
      }
    }
    Node* node = add_node(
        schema, stack, base,
        spell_as_python && &schema == user_schema_ && user_depth_ == 1);
    run_unrecorded(op, stack);
    track_results(schema, *stack, node);
  }

  // The node for a call of `schema` whose arguments are on `stack` from
  // `base`, spelled as Python's bindings call it when `as_python` (the
  // user's own call). Rewrites the arguments as the node spells them.
  Node* add_node(const c10::FunctionSchema& schema, torch::jit::Stack* stack,
                 size_t base, bool as_python) {
    // The schema whose spelling is recorded: the operator's own, or for a
    // user's call of a C++-only overload the one Python would have called,
    // its arguments taken by name.
    const c10::FunctionSchema* spelled = &schema;
    std::vector<size_t> index;  // spelled argument i is stack[base + index[i]]
    if (as_python) {
      spelled = python_spelling(schema, &index);
      fill_tensor_options(schema, stack, base);
    }
    if (spelled == &schema) {
      index.resize(schema.arguments().size());
      for (size_t i = 0; i < index.size(); ++i) index[i] = i;
    }
    const auto& params = spelled->arguments();
    const size_t n = params.size();
    // As Python's argument parser spells them: an `int[N]` given as one
    // int (C++'s `padding = 0` default reaches the kernel as [0]) is N ints.
    // An undefined tensor for a `Tensor?` (C++'s way of leaving out a bias)
    // is None, as Python passes it.
    for (size_t i = 0; i < n; ++i) {
      c10::IValue& value = (*stack)[base + index[i]];
      expand_int_list(value, params[i]);
      if (value.isTensor() && !value.toTensor().defined() &&
          params[i].real_type()->cast<c10::OptionalType>()) {
        value = c10::IValue();
      }
    }
    auto argument = [&](size_t i) -> const c10::IValue& {
      return (*stack)[base + index[i]];
    };
    // Python's parseIValuesToPyArgsKwargs: keyword-only arguments start at
    // the first trailing kwarg_only one; positional arguments end before
    // the trailing ones equal to their defaults.
    auto is_default = [&](size_t i) {
      const auto& def = params[i].default_value();
      return def.has_value() && *def == argument(i);
    };
    size_t kwarg_only_start = n;
    while (kwarg_only_start > 0 && params[kwarg_only_start - 1].kwarg_only()) {
      --kwarg_only_start;
    }
    size_t positional_end = kwarg_only_start;
    while (positional_end > 0 && is_default(positional_end - 1)) {
      --positional_end;
    }
    Node::Args args;
    for (size_t i = 0; i < positional_end; ++i) {
      args.push_back(to_argument(argument(i), params[i]));
    }
    Node::Kwargs kwargs;
    for (size_t i = kwarg_only_start; i < n; ++i) {
      if (is_default(i)) continue;
      kwargs.emplace_back(params[i].name(),
                          to_argument(argument(i), params[i]));
    }
    const auto& full_name = spelled->name();  // "aten::add"
    auto colons = full_name.find("::");
    std::string ns = full_name.substr(0, colons);
    std::string name = full_name.substr(colons + 2);
    const auto& overload = spelled->overload_name();
    std::string target = "torch.ops." + ns + "." + name + "." +
                         (overload.empty() ? "default" : overload);
    return graph_.create_node(Opcode::kCallFunction, target, std::move(args),
                              std::move(kwargs), name);
  }

  // Runs `op` as the mode computes: on meta tensors (symbolic mode: then
  // with symbolic sizes), or below the mode.
  void run_unrecorded(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
    if (!meta_) {
      run_below_mode(op, stack);
      return;
    }
    std::vector<c10::IValue> args;
    if (symbolic_) {
      args.assign(stack->end() - op.schema().arguments().size(), stack->end());
    }
    run_on_meta(op, stack);
    if (symbolic_) symbolic_->wrap_results(op.schema(), args, stack);
  }

  // The results of `schema`'s call, on top of `stack`, become `node`'s.
  void track_results(const c10::FunctionSchema& schema,
                     const torch::jit::Stack& stack, Node* node) {
    const size_t returns = schema.returns().size();
    const size_t out_base = stack.size() - returns;
    if (returns == 1) {
      track_value(stack[out_base], node);
    } else {
      for (size_t i = 0; i < returns; ++i) {
        Node* item = getitem(node, static_cast<int64_t>(i));
        track_value(stack[out_base + i], item);
      }
    }
  }

  // A call the user's code makes itself (front_end.h's sequences). True when
  // it was consumed: run with its recording deferred, or replaced by the
  // calls Python makes for the same source.
  bool front_end_call(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
    const capture::FrontEndCall kind = capture::classify(op.schema());
    if (pending_ != Pending::kNone) {
      if (continue_pending(kind, op, stack)) return true;
      finish_pending();
    }
    return start_pending(kind, op, stack);
  }

  // Records what a sequence left unfinished did, as its calls spell it.
  void finish_pending() {
    if (pending_ == Pending::kNone) return;
    // A constant when make_variable wrapped it and it was made inside
    // torch::tensor (below autograd) or written element by element there.
    if (pending_ == Pending::kBuild && pending_wrapped_ &&
        (pending_inside_tensor_ || pending_written_)) {
      record_constant(pending_tensor_);
    } else {
      for (auto& call : deferred_) {
        track(call.result,
              add_node(*call.schema, &call.args, 0, /*as_python=*/true));
      }
      if (pending_ == Pending::kBuild && !deferred_.empty() &&
          !pending_tensor_.is_same(deferred_.front().result)) {
        // The tensor make_variable (or to()) handed on stands for the
        // factory's result.
        track(pending_tensor_, node_for(deferred_.front().result));
      }
    }
    pending_ = Pending::kNone;
    pending_tensor_ = at::Tensor();
    pending_of_ = at::Tensor();
    pending_views_.clear();
    deferred_.clear();
  }

  // The mode's detach (autograd saving an output): make_fx records a
  // detach.default node for it.
  c10::intrusive_ptr<TensorImpl> detach(const TensorImpl* self) {
    at::Tensor tensor(
        c10::intrusive_ptr<TensorImpl>::unsafe_reclaim_from_nonowning(
            const_cast<TensorImpl*>(self)));
    if (user_depth_ == 0 && capture::symbolic_impl(tensor) == nullptr) {
      // (In symbolic mode make_fx records this detach too: a FakeTensor's
      // shallow copy goes through the mode.)
      // Not autograd saving an output (that happens inside an operator
      // call) but the C++ front end wrapping a result
      // (torch::autograd::make_variable in torch::tensor, torch::zeros, ...),
      // which Python does not do: the result stands for the same node.
      at::Tensor alias = capture::symbolic_impl(tensor) != nullptr
                             ? symbolic_->alias(tensor)
                             : user_level_alias(tensor);
      if (pending_ == Pending::kBuild && tensor.is_same(pending_tensor_)) {
        set_built(alias);
        pending_wrapped_ = true;
      } else if (auto found = nodes_.find(self); found != nodes_.end()) {
        track(alias, found->second);
      }
      return alias.getIntrusivePtr();
    }
    Node::Args args;
    args.push_back(node_for(tensor));
    Node* node = graph_.create_node(Opcode::kCallFunction,
                                    "torch.ops.aten.detach.default",
                                    std::move(args), {}, "detach");
    at::Tensor result;
    if (capture::symbolic_impl(tensor) != nullptr) {
      result = symbolic_->alias(tensor);
    } else {
      c10::impl::ExcludeDispatchKeyGuard below(kCaptureKeys);
      result = at::_ops::detach::call(tensor);
    }
    track(result, node);
    return result.getIntrusivePtr();
  }

  std::vector<CapturedGraph::Constant> take_constants() {
    return std::move(constants_);
  }

  // The schema of an operator named "aten::NAME" or "aten::NAME.OVERLOAD".
  static const c10::FunctionSchema& find_schema(const std::string& name) {
    auto colons = name.find("::");
    auto dot = name.find('.', colons == std::string::npos ? 0 : colons);
    c10::OperatorName op_name{name.substr(0, dot), dot == std::string::npos
                                                       ? ""
                                                       : name.substr(dot + 1)};
    auto handle = c10::Dispatcher::singleton().findOp(op_name);
    if (!handle.has_value()) {
      throw FxError("make_fx: no operator " + name +
                    " (spell it aten::NAME or aten::NAME.OVERLOAD)");
    }
    return handle->schema();
  }

  // Runs `kernel` (a decomposition, or Python's own composite kernel) in
  // the operator's place. Its calls are Python code's calls in make_fx, so
  // they are spelled as the captured code's own calls are. False, the stack
  // untouched, when the kernel declines (returns no values).
  bool run_kernel(const c10::OperatorHandle& op, const Decomposition& kernel,
                  torch::jit::Stack* stack) {
    const auto& schema = op.schema();
    const size_t n = schema.arguments().size();
    std::vector<c10::IValue> args(stack->end() - n, stack->end());
    std::vector<c10::IValue> results;
    {
      const int depth = user_depth_;
      const c10::FunctionSchema* schema_at_depth = user_schema_;
      user_depth_ = 0;
      user_schema_ = nullptr;
      try {
        // Below autograd the user-call key is excluded with the autograd
        // keys; the kernel's calls are user calls again.
        c10::impl::LocalDispatchKeySet tls =
            c10::impl::tls_local_dispatch_key_set();
        tls.excluded_ = tls.excluded_.remove(kUserCallKey);
        tls.included_ = tls.included_.add(kUserCallKey);
        c10::impl::ForceDispatchKeyGuard user_calls(tls);
        results = kernel(args);
      } catch (...) {
        user_depth_ = depth;
        user_schema_ = schema_at_depth;
        throw;
      }
      user_depth_ = depth;
      user_schema_ = schema_at_depth;
    }
    if (results.empty() && !schema.returns().empty()) return false;
    if (results.size() != schema.returns().size()) {
      throw FxError("make_fx: the kernel or decomposition of " + schema.name() +
                    "." + schema.overload_name() + " returned " +
                    std::to_string(results.size()) + " values, not " +
                    std::to_string(schema.returns().size()));
    }
    torch::jit::drop(*stack, n);
    for (auto& result : results) stack->push_back(std::move(result));
    return true;
  }

  // Brackets an operator call as the user-call key sees it: depth 1 is a
  // call made by the captured code itself.
  const c10::FunctionSchema* enter_call(const c10::FunctionSchema* schema) {
    const c10::FunctionSchema* saved = user_schema_;
    if (++user_depth_ == 1) user_schema_ = schema;
    return saved;
  }
  bool at_user_level() const { return user_depth_ == 0; }
  void exit_call(const c10::FunctionSchema* saved) {
    --user_depth_;
    user_schema_ = saved;
  }

  static void run_below_mode(const c10::OperatorHandle& op,
                             torch::jit::Stack* stack) {
    c10::impl::ExcludeDispatchKeyGuard below(kCaptureKeys);
    op.callBoxed(stack);
  }

  // Operators whose result is a tensor's value in C++.
  static bool reads_data(const c10::FunctionSchema& schema) {
    static const c10::FunctionSchema* local_scalar_dense =
        &find_schema("aten::_local_scalar_dense");
    static const c10::FunctionSchema* equal = &find_schema("aten::equal");
    return &schema == local_scalar_dense || &schema == equal;
  }

  // A meta tensor standing for `tensor` (itself when it is one already).
  at::Tensor meta_of(const at::Tensor& tensor) {
    if (!tensor.defined() || tensor.is_meta()) return tensor;
    auto& shadow = meta_shadows_[tensor.unsafeGetTensorImpl()];
    if (!shadow.defined()) {
      // A normal tensor even under InferenceMode, as `tensor` is: views of
      // it are made by autograd's view tracking above the mode.
      c10::InferenceMode normal(tensor.is_inference());
      c10::impl::ExcludeDispatchKeyGuard below(kCaptureKeys);
      shadow = at::empty_strided(tensor.sizes(), tensor.strides(),
                                 tensor.options().device(at::kMeta));
      alive_.push_back(tensor);
    }
    return shadow;
  }

  c10::IValue meta_of(const c10::IValue& value) {
    if (value.isTensor()) return meta_of(value.toTensor());
    if (value.isTensorList()) {
      c10::List<at::Tensor> list;
      for (const at::Tensor& t : value.toTensorList())
        list.push_back(meta_of(t));
      return list;
    }
    if (value.isList() && !value.isIntList() && !value.isDoubleList() &&
        !value.isBoolList()) {
      auto list = value.toList();
      bool tensors = false;
      for (const c10::IValue& item : list) tensors |= item.isTensor();
      if (!tensors) return value;
      c10::List<c10::optional<at::Tensor>> out;
      for (const c10::IValue& item : list) {
        out.push_back(item.isTensor()
                          ? c10::optional<at::Tensor>(meta_of(item.toTensor()))
                          : c10::nullopt);
      }
      return out;
    }
    return value;
  }

  // Runs `op` on meta tensors: LibTorch's meta kernel, or a shape rule here
  // for the operators its C++ build lacks one for.
  void run_on_meta(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
    const size_t n = op.schema().arguments().size();
    for (size_t i = stack->size() - n; i < stack->size(); ++i) {
      (*stack)[i] =
          meta_of(symbolic_ ? symbolic_->hints((*stack)[i]) : (*stack)[i]);
    }
    c10::impl::ExcludeDispatchKeyGuard below(kCaptureKeys);
    at::AutoDispatchBelowADInplaceOrView no_autograd;
    if (capture::run_meta_rule(op.schema(), stack)) return;
    try {
      op.callBoxed(stack);
    } catch (const c10::Error& e) {
      throw FxError(meta_error(op.schema(), e));
    }
  }

  // Why `schema` could not run on meta tensors, naming it.
  static std::string meta_error(const c10::FunctionSchema& schema,
                                const c10::Error& e) {
    static const absl::flat_hash_set<std::string> data_dependent = {
        "aten::nonzero",  "aten::masked_select", "aten::_unique",
        "aten::_unique2", "aten::unique_dim",    "aten::unique_consecutive"};
    std::string name =
        schema.name() +
        (schema.overload_name().empty() ? "" : "." + schema.overload_name());
    if (data_dependent.contains(schema.name())) {
      return "make_fx (meta mode): " + name +
             "'s output shape depends on the values of its input, which meta "
             "tensors do not have: data-dependent code cannot be captured in "
             "meta mode";
    }
    return "make_fx (meta mode): " + name +
           " cannot run on meta tensors (no meta kernel in LibTorch's C++ "
           "build, no shape rule in fx_core/capture/meta_rules.cc): " +
           e.what_without_backtrace();
  }

 private:
  // The sequences of front_end.h being followed: `2 - x`'s empty_like (kLike)
  // and fill_ (kLikeFilled); torch::tensor's empty or scalar_tensor and the
  // select / fill_ calls writing it (kBuild).
  enum class Pending { kNone, kLike, kLikeFilled, kBuild };

  bool is_pending(const c10::IValue& value) const {
    return value.isTensor() &&
           pending_views_.contains(value.toTensor().unsafeGetTensorImpl());
  }

  // Runs the call below the mode, its recording deferred.
  void defer(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
    const size_t n = op.schema().arguments().size();
    DeferredCall call{&op.schema(),
                      std::vector<c10::IValue>(stack->end() - n, stack->end()),
                      at::Tensor()};
    if (symbolic_) {
      run_unrecorded(op, stack);
    } else {
      run_below_mode(op, stack);
    }
    call.result = stack->back().toTensor();
    deferred_.push_back(std::move(call));
  }

  bool start_pending(capture::FrontEndCall kind, const c10::OperatorHandle& op,
                     torch::jit::Stack* stack) {
    using capture::FrontEndCall;
    const size_t base = stack->size() - op.schema().arguments().size();
    if (kind == FrontEndCall::kEmptyLike) {
      // at::empty_like(y, MemoryFormat::Preserve): no options given.
      for (size_t i = 1; i < 5; ++i) {
        if (!(*stack)[base + i].isNone()) return false;
      }
      const c10::IValue& format = (*stack)[base + 5];
      if (!format.isInt() ||
          format.toInt() != static_cast<int64_t>(c10::MemoryFormat::Preserve)) {
        return false;
      }
      pending_ = Pending::kLike;
      pending_of_ = (*stack)[base].toTensor();
    } else if ((kind == FrontEndCall::kEmpty ||
                kind == FrontEndCall::kScalarTensor) &&
               (capture::below_autograd_outside_inference() ||
                c10::InferenceMode::is_enabled())) {
      // Made inside torch::tensor (below autograd), or under InferenceMode
      // where that cannot be told: a constant if make_variable wraps it.
      pending_ = Pending::kBuild;
      pending_wrapped_ = false;
      pending_inside_tensor_ = capture::below_autograd_outside_inference();
      pending_written_ = kind == FrontEndCall::kScalarTensor;
    } else {
      return false;
    }
    defer(op, stack);
    pending_tensor_ = stack->back().toTensor();
    pending_views_.insert(pending_tensor_.unsafeGetTensorImpl());
    return true;
  }

  // Follows the pending sequence one call on; false when `op` breaks it.
  bool continue_pending(capture::FrontEndCall kind,
                        const c10::OperatorHandle& op,
                        torch::jit::Stack* stack) {
    using capture::FrontEndCall;
    const size_t base = stack->size() - op.schema().arguments().size();
    const c10::IValue& self = (*stack)[base];
    if (kind == FrontEndCall::kOther || !is_pending(self)) return false;
    if (pending_ == Pending::kBuild) {
      // torch::tensor writes before make_variable wraps; a call after that
      // is the code's own.
      if (pending_wrapped_) return false;
      if (kind == FrontEndCall::kTo &&
          self.toTensor().is_same(pending_tensor_)) {
        // torch::tensor's move to the requested device: the constant is
        // the result.
        symbolic_ ? run_unrecorded(op, stack) : run_below_mode(op, stack);
        set_built(stack->back().toTensor());
        pending_written_ = true;  // torch::tensor's convert_to_tensor
        return true;
      }
      if (kind == FrontEndCall::kDetachInPlace) {
        // make_variable under InferenceMode.
        symbolic_ ? run_unrecorded(op, stack) : run_below_mode(op, stack);
        pending_wrapped_ = true;
        return true;
      }
      if (kind != FrontEndCall::kSelect && kind != FrontEndCall::kFill) {
        return false;
      }
      defer(op, stack);
      if (kind == FrontEndCall::kFill) pending_written_ = true;
      pending_views_.insert(stack->back().toTensor().unsafeGetTensorImpl());
      alive_.push_back(stack->back().toTensor());
      return true;
    }
    if (pending_ == Pending::kLike) {
      if (kind != FrontEndCall::kFill) return false;
      pending_scalar_ = (*stack)[base + 1].toScalar();
      defer(op, stack);
      pending_ = Pending::kLikeFilled;
      return true;
    }
    // kLikeFilled: `scalar OP y` completes when OP takes y (and sub_ no
    // alpha).
    if (kind != FrontEndCall::kReverseSub &&
        kind != FrontEndCall::kReverseDiv &&
        kind != FrontEndCall::kReverseRemainder) {
      return false;
    }
    const c10::IValue& other = (*stack)[base + 1];
    if (!other.isTensor() || !other.toTensor().is_same(pending_of_) ||
        (kind == FrontEndCall::kReverseSub &&
         !((*stack)[base + 2].toScalar().equal(1)))) {
      return false;
    }
    at::Tensor result_of = pending_tensor_;
    at::Tensor y = pending_of_;
    c10::Scalar scalar = pending_scalar_;
    pending_ = Pending::kNone;
    pending_tensor_ = at::Tensor();
    pending_of_ = at::Tensor();
    pending_views_.clear();
    deferred_.clear();
    torch::jit::drop(*stack, op.schema().arguments().size());
    // Python's calls, recorded as the user's; the C++ result tensor takes
    // their value and node.
    at::Tensor python = capture::python_reverse_scalar(kind, y, scalar);
    if (symbolic_) {
      result_of = python;
    } else {
      c10::impl::ExcludeDispatchKeyGuard below(kCaptureKeys);
      result_of.copy_(python);
    }
    track(result_of, node_for(python));
    stack->push_back(result_of);
    return true;
  }

  // A tensor sharing `tensor`'s data and metadata, not an inference tensor
  // (its caller sets a version counter, which inference tensors refuse).
  static at::Tensor user_level_alias(const at::Tensor& tensor) {
    c10::impl::ExcludeDispatchKeyGuard below(kCaptureKeys);
    if (!tensor.is_inference()) return at::_ops::detach::call(tensor);
    c10::InferenceMode normal(false);
    at::Tensor alias = at::empty({0}, tensor.options());
    alias.set_(tensor.storage(), tensor.storage_offset(), tensor.sizes(),
               tensor.strides());
    return alias;
  }

  // The tensor a kBuild sequence hands on (after to(), or the detach of
  // torch::autograd::make_variable) instead of the one it had.
  void set_built(const at::Tensor& tensor) {
    pending_tensor_ = tensor;
    pending_views_.insert(tensor.unsafeGetTensorImpl());
    alive_.push_back(tensor);
  }

  // A tensor torch::tensor built: a constant of the graph, copied before
  // use (make_fx's _tensor_constantN + lift_fresh_copy).
  void record_constant(const at::Tensor& tensor) {
    at::Tensor value;
    {
      c10::impl::ExcludeDispatchKeyGuard below(kCaptureKeys);
      value = tensor.clone();
    }
    std::string name = "_tensor_constant" + std::to_string(tensors_++);
    constants_.push_back({name, value, false});
    alive_.push_back(value);
    Node::Args args;
    args.push_back(graph_.get_attr(name));
    Node* node = graph_.create_node(Opcode::kCallFunction,
                                    "torch.ops.aten.lift_fresh_copy.default",
                                    std::move(args), {}, "lift_fresh_copy");
    if (c10::InferenceMode::is_enabled()) {
      // Python's torch.tensor detaches its result in place there.
      Node::Args self;
      self.push_back(node);
      node = graph_.create_node(Opcode::kCallFunction,
                                "torch.ops.aten.detach_.default",
                                std::move(self), {}, "detach_");
    }
    track(tensor, node);
  }

  // A factory's TensorOptions as Python's bindings pass them: `device`
  // (the default device, CPU) and `pin_memory` (False) always; for a
  // `*_like` factory also `dtype` and `layout`, and `device` from `self`.
  // C++ leaves them None. The values are the kernel's own defaults, so the
  // call computes the same.
  static void fill_tensor_options(const c10::FunctionSchema& schema,
                                  torch::jit::Stack* stack, size_t base) {
    const auto& params = schema.arguments();
    auto at = [&](const char* name) -> c10::IValue* {
      auto i = schema.argumentIndexWithName(name);
      if (!i.has_value() || !params[*i].kwarg_only()) return nullptr;
      return &(*stack)[base + static_cast<size_t>(*i)];
    };
    c10::IValue* dtype = at("dtype");
    c10::IValue* layout = at("layout");
    c10::IValue* device = at("device");
    c10::IValue* pin_memory = at("pin_memory");
    if (!dtype || !layout || !device || !pin_memory) return;
    const c10::IValue& first = (*stack)[base];
    const bool like =
        !params.empty() && params[0].name() == "self" && first.isTensor();
    if (like) {
      const at::Tensor& self = first.toTensor();
      if (dtype->isNone()) *dtype = static_cast<int64_t>(self.scalar_type());
      if (layout->isNone()) *layout = static_cast<int64_t>(self.layout());
      if (device->isNone()) *device = self.device();
    } else if (device->isNone()) {
      *device = c10::Device(c10::kCPU);
    }
    if (pin_memory->isNone()) *pin_memory = false;
  }

  // For a C++-only overload, the schema Python's parser would have picked
  // and where each of its arguments is in `schema`'s; else `&schema`.
  static const c10::FunctionSchema* python_spelling(
      const c10::FunctionSchema& schema, std::vector<size_t>* index) {
    const auto& overloads = python_overloads();
    auto found = overloads.find(schema.name() + "." + schema.overload_name());
    if (found == overloads.end()) return &schema;
    auto handle =
        c10::Dispatcher::singleton().findOp({schema.name(), found->second});
    if (!handle.has_value()) return &schema;
    const auto& python = handle->schema();
    index->clear();
    for (const auto& param : python.arguments()) {
      auto at = schema.argumentIndexWithName(param.name());
      if (!at.has_value()) return &schema;
      index->push_back(static_cast<size_t>(*at));
    }
    return &python;
  }

  bool is_parameter(const at::Tensor& tensor) const {
    if (has_module_) return parameters_.contains(tensor.unsafeGetTensorImpl());
    return tensor.requires_grad() && tensor.is_leaf();
  }

  Node* getitem(Node* of, int64_t index) {
    Node::Args args;
    args.push_back(of);
    args.push_back(index);
    return graph_.create_node(Opcode::kCallFunction, "operator.getitem",
                              std::move(args), {}, "getitem");
  }

  // Python's track_tensor_tree: a tensor is the node's value; a list gets
  // one getitem per element.
  void track_value(const c10::IValue& value, Node* node) {
    if (value.isTensor()) {
      track(value.toTensor(), node);
    } else if (value.isTensorList()) {
      auto list = value.toTensorList();
      for (size_t i = 0; i < list.size(); ++i) {
        track(list.get(i), getitem(node, static_cast<int64_t>(i)));
      }
    }
  }

  static void expand_int_list(c10::IValue& value, const c10::Argument& param) {
    if (!param.N().has_value() || *param.N() < 2 || !value.isIntList()) return;
    auto list = value.toIntList();
    if (list.size() != 1) return;
    std::vector<int64_t> expanded(static_cast<size_t>(*param.N()), list.get(0));
    value = c10::IValue(std::move(expanded));
  }

  Argument to_argument(const c10::IValue& value, const c10::Argument& param) {
    if (value.isNone()) return Argument();
    if (has_kind(param, c10::TypeKind::ScalarTypeType)) {
      return Argument::dtype(
          dtype_name(static_cast<c10::ScalarType>(value.toInt())));
    }
    if (has_kind(param, c10::TypeKind::LayoutType)) {
      return Argument::layout(
          layout_name(static_cast<c10::Layout>(value.toInt())));
    }
    if (has_kind(param, c10::TypeKind::MemoryFormatType)) {
      return Argument::memory_format(
          memory_format_name(static_cast<c10::MemoryFormat>(value.toInt())));
    }
    return to_argument(value, param.name());
  }

  Argument to_argument(const c10::IValue& value, const std::string& what) {
    if (value.isNone()) return Argument();
    if (value.isTensor()) {
      if (!value.toTensor().defined()) return Argument();
      return Argument(node_for(value.toTensor()));
    }
    if (value.isBool()) return Argument(value.toBool());
    if (value.isInt()) return Argument(value.toInt());
    if (value.isDouble()) return Argument(value.toDouble());
    if (value.isSymInt()) {
      if (symbolic_) return symbolic_->argument(value.toSymInt());
      return Argument(value.toSymInt().expect_int());
    }
    if (value.isString()) return Argument(value.toStringRef());
    if (value.isDevice()) return Argument::device(value.toDevice().str());
    if (value.isList()) {
      ArgumentList items;
      for (const auto& item : value.toListRef()) {
        items.push_back(to_argument(item, what));
      }
      return Argument::list(std::move(items));
    }
    throw FxError("make_fx: cannot record argument `" + what + "` of type " +
                  value.tagKind());
  }

  Graph& graph_;
  bool has_module_ = false;
  absl::flat_hash_set<const TensorImpl*> parameters_;
  absl::flat_hash_map<const TensorImpl*, Node*> nodes_;
  absl::flat_hash_map<const TensorImpl*, std::string> attribute_names_;
  std::vector<CapturedGraph::Constant> constants_;
  std::vector<at::Tensor> alive_;
  int params_ = 0;
  int tensors_ = 0;
  bool meta_ = false;
  bool allow_data_dependent_ = false;
  absl::flat_hash_map<const TensorImpl*, at::Tensor> meta_shadows_;
  std::shared_ptr<capture::SymbolicCapture> symbolic_;
  int user_depth_ = 0;
  const c10::FunctionSchema* user_schema_ = nullptr;
  absl::flat_hash_map<const c10::FunctionSchema*, Decomposition>
      decompositions_;
  absl::flat_hash_set<const c10::FunctionSchema*> leaf_ops_;
  Pending pending_ = Pending::kNone;
  at::Tensor pending_tensor_;  // the tensor the sequence makes
  at::Tensor pending_of_;      // kLike: the `y` of empty_like(y)
  c10::Scalar pending_scalar_;
  // kBuild: torch::autograd::make_variable wrapped the tensor, as
  // torch::tensor does.
  bool pending_wrapped_ = false;
  // kBuild: made below autograd outside InferenceMode (inside
  // torch::tensor); written by fill_ calls or moved by to() as
  // torch::tensor does (or a scalar_tensor).
  bool pending_inside_tensor_ = false;
  bool pending_written_ = false;
  // The pending tensor and (kBuild) its views.
  absl::flat_hash_set<const TensorImpl*> pending_views_;
  // The deferred calls and their arguments, recorded if the sequence breaks.
  struct DeferredCall {
    const c10::FunctionSchema* schema;
    std::vector<c10::IValue> args;
    at::Tensor result;
  };
  std::vector<DeferredCall> deferred_;
};

thread_local Recorder* tls_recorder = nullptr;

// The torch_dispatch hooks LibTorch's Python-key fallback and
// TensorImpl::shallow_copy_and_detach call; no Python object is involved.
class CaptureVTable final : public c10::impl::PyInterpreterVTable {
 public:
  std::string name() const override { return "fx::make_fx"; }
  void decref(PyObject*, bool) const override {}
  c10::intrusive_ptr<TensorImpl> detach(const TensorImpl* self) const override {
    if (tls_recorder != nullptr) return tls_recorder->detach(self);
    // Another thread that inherited the mode: not recorded.
    at::Tensor tensor(
        c10::intrusive_ptr<TensorImpl>::unsafe_reclaim_from_nonowning(
            const_cast<TensorImpl*>(self)));
    c10::impl::ExcludeDispatchKeyGuard below(kCaptureKeys);
    return at::_ops::detach::call(tensor).getIntrusivePtr();
  }
  void dispatch(const c10::OperatorHandle& op,
                torch::jit::Stack* stack) const override {
    if (tls_recorder != nullptr) {
      tls_recorder->dispatch(op, stack);
    } else {
      Recorder::run_below_mode(op, stack);
    }
  }
  void python_dispatcher(const c10::OperatorHandle& op, DispatchKeySet,
                         torch::jit::Stack*) const override {
    unsupported(op.schema().name().c_str());
  }
  // Only called for tensors with Python-defined metadata; make_fx makes none.
  bool is_contiguous(const TensorImpl*, at::MemoryFormat) const override {
    unsupported("is_contiguous");
  }
  bool is_strides_like(const TensorImpl*, at::MemoryFormat) const override {
    unsupported("is_strides_like");
  }
  bool is_non_overlapping_and_dense(const TensorImpl*) const override {
    unsupported("is_non_overlapping_and_dense");
  }
  c10::Device device(const TensorImpl*) const override {
    unsupported("device");
  }
  int64_t dim(const TensorImpl*) const override { unsupported("dim"); }
  c10::IntArrayRef strides(const TensorImpl*) const override {
    unsupported("strides");
  }
  c10::IntArrayRef sizes(const TensorImpl*) const override {
    unsupported("sizes");
  }
  c10::SymIntArrayRef sym_sizes(const TensorImpl*) const override {
    unsupported("sym_sizes");
  }
  c10::Layout layout(const TensorImpl*) const override {
    unsupported("layout");
  }
  c10::SymInt sym_numel(const TensorImpl*) const override {
    unsupported("sym_numel");
  }
  c10::SymIntArrayRef sym_strides(const TensorImpl*) const override {
    unsupported("sym_strides");
  }
  c10::SymInt sym_storage_offset(const TensorImpl*) const override {
    unsupported("sym_storage_offset");
  }
  void trace_gpu_event_creation(uintptr_t) const override {}
  void trace_gpu_event_deletion(uintptr_t) const override {}
  void trace_gpu_event_record(uintptr_t, uintptr_t) const override {}
  void trace_gpu_event_wait(uintptr_t, uintptr_t) const override {}
  void trace_gpu_memory_allocation(uintptr_t) const override {}
  void trace_gpu_memory_deallocation(uintptr_t) const override {}
  void trace_gpu_stream_creation(uintptr_t) const override {}
  void trace_gpu_device_synchronization() const override {}
  void trace_gpu_stream_synchronization(uintptr_t) const override {}
  void trace_gpu_event_synchronization(uintptr_t) const override {}

 private:
  [[noreturn]] static void unsupported(const char* what) {
    throw FxError(std::string("make_fx: unsupported dispatch hook ") + what);
  }
};

// The user-call key's fallback: notes the call, then goes on below the key.
void user_call_fallback(const c10::OperatorHandle& op, DispatchKeySet keys,
                        torch::jit::Stack* stack) {
  const DispatchKeySet below =
      keys & DispatchKeySet(DispatchKeySet::FULL_AFTER, kUserCallKey);
  Recorder* recorder = tls_recorder;
  if (recorder == nullptr) {
    op.redispatchBoxed(below, stack);
    return;
  }
  if (recorder->is_leaf(&op.schema())) {
    recorder->record(op, stack, /*spell_as_python=*/false);
    return;
  }
  if (recorder->at_user_level() && recorder->front_end_call(op, stack)) {
    return;
  }
  const c10::FunctionSchema* saved = recorder->enter_call(&op.schema());
  try {
    op.redispatchBoxed(below, stack);
  } catch (...) {
    recorder->exit_call(saved);
    throw;
  }
  recorder->exit_call(saved);
}

c10::impl::PyInterpreter* capture_interpreter() {
  // Leaked, as LibTorch expects interpreters to outlive every tensor.
  static auto* interpreter =
      new c10::impl::PyInterpreter(new CaptureVTable());  // NOLINT
  return interpreter;
}

// Installs the recorder and the mode on this thread; restores both.
class CaptureScope {
 public:
  explicit CaptureScope(Recorder* recorder) {
    if (tls_recorder != nullptr) {
      throw FxError("make_fx: a capture is already running on this thread");
    }
    if (c10::impl::TorchDispatchModeTLS::get_mode()) {
      throw FxError("make_fx: a torch_dispatch mode is already active");
    }
    static char token;  // the mode's "PyObject": never dereferenced
    mode_ = std::make_shared<c10::SafePyObject>(
        reinterpret_cast<PyObject*>(&token), capture_interpreter());
    c10::impl::TorchDispatchModeTLS::swap_mode(mode_);
    tls_recorder = recorder;
  }
  ~CaptureScope() {
    tls_recorder = nullptr;
    c10::impl::TorchDispatchModeTLS::swap_mode(mode_);
  }
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;

 private:
  std::shared_ptr<c10::SafePyObject> mode_;
};

// Symbolic mode's capture: fresh symbols, or the declared sizes.
std::shared_ptr<capture::SymbolicCapture> symbolic_capture(
    Graph& graph, const Recorder& recorder,
    const std::vector<at::Tensor>& examples, const MakeFxOptions& options) {
  auto tracked = [&recorder](const TensorImpl* t) {
    return recorder.tracked(t);
  };
  if (options.declared_sizes.empty()) {
    return capture::SymbolicCapture::create(graph, tracked, examples);
  }
  std::vector<capture::SymbolicCapture::InputShape> shapes;
  for (const SymbolicSizes& s : options.declared_sizes) {
    shapes.push_back({s.sizes, s.strides});
  }
  return capture::SymbolicCapture::create_declared(
      graph, tracked, examples, std::move(shapes), options.symbol_hints);
}

// The symbolic sizes and strides of `tensors` (integers for a tensor that
// is not symbolic; empty for an undefined one).
std::vector<SymbolicSizes> symbolic_sizes(
    const std::vector<at::Tensor>& tensors) {
  std::vector<SymbolicSizes> out;
  for (const at::Tensor& t : tensors) {
    SymbolicSizes sizes;
    if (const capture::SymbolicTensorImpl* impl = capture::symbolic_impl(t)) {
      sizes = {impl->size_exprs(), impl->stride_exprs()};
    } else if (t.defined()) {
      for (int64_t s : t.sizes()) sizes.sizes.push_back(sym::Expr::integer(s));
      for (int64_t s : t.strides()) {
        sizes.strides.push_back(sym::Expr::integer(s));
      }
    }
    out.push_back(std::move(sizes));
  }
  return out;
}

}  // namespace

// One fallback per key per process: no other library may register one on
// TESTING_ONLY_GenericMode alongside fx::make_fx.
TORCH_LIBRARY_IMPL(_, TESTING_ONLY_GenericMode, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&user_call_fallback>());
}

CapturedGraph capture_graph(const TensorFunction& fn,
                            const std::vector<at::Tensor>& example_inputs,
                            const MakeFxOptions& options) {
  CapturedGraph captured;
  captured.graph = std::make_unique<Graph>();
  Graph& graph = *captured.graph;
  Recorder recorder(graph, options);
  const std::string mode = tracing_mode(options);
  std::shared_ptr<capture::SymbolicCapture> symbolic;
  if (mode == "symbolic") {
    symbolic = symbolic_capture(graph, recorder, example_inputs, options);
    recorder.set_symbolic(symbolic);
  }
  std::vector<Node*> placeholders;
  for (size_t i = 0; i < example_inputs.size(); ++i) {
    placeholders.push_back(graph.placeholder("arg" + std::to_string(i) + "_1"));
    if (mode == "real") recorder.track(example_inputs[i], placeholders.back());
  }
  std::vector<at::Tensor> outputs;
  {
    CaptureScope scope(&recorder);
    c10::impl::IncludeDispatchKeyGuard include(kCaptureKeys);
    if (symbolic) {
      std::vector<at::Tensor> inputs;
      for (size_t i = 0; i < example_inputs.size(); ++i) {
        inputs.push_back(symbolic->input(i));
        recorder.track(inputs.back(), placeholders[i]);
      }
      outputs = fn(inputs);
    } else if (mode == "fake") {
      std::vector<at::Tensor> meta_inputs;
      for (size_t i = 0; i < example_inputs.size(); ++i) {
        meta_inputs.push_back(recorder.meta_of(example_inputs[i]));
        recorder.track(meta_inputs.back(), placeholders[i]);
      }
      outputs = fn(meta_inputs);
    } else {
      outputs = fn(example_inputs);
    }
  }
  recorder.finish_pending();
  ArgumentList results;
  for (const auto& out : outputs) {
    if (!out.defined()) {
      results.emplace_back();
      continue;
    }
    results.emplace_back(recorder.node_for(out));
  }
  graph.output(Argument::list(std::move(results)));
  captured.constants = recorder.take_constants();
  if (symbolic) {
    for (size_t i = 0; i < placeholders.size(); ++i) {
      placeholders[i]->set_meta("tensor_meta", symbolic->tensor_meta(i));
    }
    captured.shape_env = symbolic->shape_env();
    captured.output_sizes = symbolic_sizes(outputs);
  }
  return captured;
}

std::shared_ptr<GraphModule> make_fx(
    const TensorFunction& fn, const std::vector<at::Tensor>& example_inputs,
    const MakeFxOptions& options) {
  CapturedGraph captured = capture_graph(fn, example_inputs, options);
  GraphModule::AttributeMap attributes;
  for (auto& constant : captured.constants) {
    GraphModule::Attribute attribute;
    attribute.tensor = std::move(constant.tensor);
    attribute.is_parameter = constant.is_parameter;
    attributes.emplace_back(std::move(constant.name), std::move(attribute));
  }
  auto gm = std::make_shared<GraphModule>(attributes, std::move(captured.graph),
                                          options.class_name);
  if (captured.shape_env) gm->set_shape_env(std::move(captured.shape_env));
  return gm;
}

}  // namespace fx
