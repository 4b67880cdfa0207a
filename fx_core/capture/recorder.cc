// The recorder's recording (recorder.h): each call the mode sees decomposed,
// or recorded as one node spelled as Python's bindings spell it and run;
// tensors tracked to the nodes standing for them; constants and the
// mode's detach.
#include "fx_core/capture/recorder.h"

#include <ATen/Functions.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/capture/capture_extensions.h"
#include "fx_core/capture/python_kernels.h"
#include "fx_core/capture/python_spelling.h"
#include "fx_core/capture/symbolic_tensor.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"

namespace fx {
namespace capture {

using c10::DispatchKey;
using c10::DispatchKeySet;
using c10::TensorImpl;

std::string tracing_mode(const MakeFxOptions& options) {
  const std::string& mode = options.tracing_mode;
  if (mode != "real" && mode != "fake" && mode != "symbolic") {
    throw FxError("make_fx: tracing_mode is \"" + mode +
                  "\"; it takes \"real\", \"fake\" or \"symbolic\"");
  }
  return mode == "real" && options.meta ? "fake" : mode;
}

Recorder::Recorder(Graph& graph, const MakeFxOptions& options)
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

void Recorder::add_registered_extensions() {
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

void Recorder::track(const at::Tensor& tensor, Node* node) {
  nodes_[tensor.unsafeGetTensorImpl()] = node;
  if (symbolic_) symbolic_->retrack(tensor);
  // Kept alive for the capture, so no later tensor reuses the address.
  alive_.push_back(tensor);
}

Node* Recorder::node_for(const at::Tensor& tensor) {
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

void Recorder::dispatch(const c10::OperatorHandle& op,
                        torch::jit::Stack* stack) {
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
    op.callBoxedForDispatchKey(DispatchKey::CompositeImplicitAutograd, *stack);
    return;
  }
  record(op, stack, /*spell_as_python=*/true);
}

void Recorder::record(const c10::OperatorHandle& op, torch::jit::Stack* stack,
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
  Node* node =
      add_node(schema, stack, base,
               spell_as_python && &schema == user_schema_ && user_depth_ == 1);
  run_unrecorded(op, stack);
  track_results(schema, *stack, node);
}

Node* Recorder::add_node(const c10::FunctionSchema& schema,
                         torch::jit::Stack* stack, size_t base,
                         bool as_python) {
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
    kwargs.emplace_back(params[i].name(), to_argument(argument(i), params[i]));
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

void Recorder::run_unrecorded(const c10::OperatorHandle& op,
                              torch::jit::Stack* stack) {
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

void Recorder::track_results(const c10::FunctionSchema& schema,
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

c10::intrusive_ptr<TensorImpl> Recorder::detach(const TensorImpl* self) {
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
  Node* node =
      graph_.create_node(Opcode::kCallFunction, "torch.ops.aten.detach.default",
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

const c10::FunctionSchema& Recorder::find_schema(const std::string& name) {
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

bool Recorder::run_kernel(const c10::OperatorHandle& op,
                          const Decomposition& kernel,
                          torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  const size_t n = schema.arguments().size();
  std::vector<c10::IValue> args(stack->end() - n, stack->end());
  std::vector<c10::IValue> results;
  {
    const int depth = user_depth_;
    const c10::FunctionSchema* schema_at_depth = user_schema_;
    // The kernel's calls are not those of a composite being watched
    // (recorder_composite.cc): that composite is refused, as it made graph
    // nodes outside its one call.
    Watch* const watch = watch_;
    user_depth_ = 0;
    user_schema_ = nullptr;
    watch_ = nullptr;
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
      watch_ = watch;
      throw;
    }
    user_depth_ = depth;
    user_schema_ = schema_at_depth;
    watch_ = watch;
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

bool Recorder::reads_data(const c10::FunctionSchema& schema) {
  static const c10::FunctionSchema* local_scalar_dense =
      &find_schema("aten::_local_scalar_dense");
  static const c10::FunctionSchema* equal = &find_schema("aten::equal");
  return &schema == local_scalar_dense || &schema == equal;
}

Node* Recorder::getitem(Node* of, int64_t index) {
  Node::Args args;
  args.push_back(of);
  args.push_back(index);
  return graph_.create_node(Opcode::kCallFunction, "operator.getitem",
                            std::move(args), {}, "getitem");
}

void Recorder::track_value(const c10::IValue& value, Node* node) {
  if (value.isTensor()) {
    track(value.toTensor(), node);
  } else if (value.isTensorList()) {
    auto list = value.toTensorList();
    for (size_t i = 0; i < list.size(); ++i) {
      track(list.get(i), getitem(node, static_cast<int64_t>(i)));
    }
  }
}

Argument Recorder::to_argument(const c10::IValue& value,
                               const c10::Argument& param) {
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

Argument Recorder::to_argument(const c10::IValue& value,
                               const std::string& what) {
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

}  // namespace capture
}  // namespace fx
