// The recorder following the C++ front end's call sequences (front_end.h,
// recorder.h): `2 - x`'s empty_like and fill_ replaced by Python's calls,
// torch::tensor's factory and writes recorded as a constant, their
// recording deferred until the sequence completes or breaks.
#include <ATen/Functions.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <string>
#include <utility>
#include <vector>

#include "fx_core/capture/front_end.h"
#include "fx_core/capture/recorder.h"
#include "fx_core/capture/symbolic_tensor.h"
#include "fx_core/support/error.h"

namespace fx {
namespace capture {

using c10::DispatchKey;
using c10::DispatchKeySet;
using c10::TensorImpl;

bool Recorder::front_end_call(const c10::OperatorHandle& op,
                              torch::jit::Stack* stack) {
  const capture::FrontEndCall kind = capture::classify(op.schema());
  if (pending_ != Pending::kNone) {
    if (continue_pending(kind, op, stack)) return true;
    finish_pending();
  }
  return start_pending(kind, op, stack);
}

void Recorder::finish_pending() {
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

void Recorder::defer(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
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

bool Recorder::start_pending(capture::FrontEndCall kind,
                             const c10::OperatorHandle& op,
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

bool Recorder::continue_pending(capture::FrontEndCall kind,
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
    if (kind == FrontEndCall::kTo && self.toTensor().is_same(pending_tensor_)) {
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
  if (kind != FrontEndCall::kReverseSub && kind != FrontEndCall::kReverseDiv &&
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

at::Tensor Recorder::user_level_alias(const at::Tensor& tensor) {
  c10::impl::ExcludeDispatchKeyGuard below(kCaptureKeys);
  if (!tensor.is_inference()) return at::_ops::detach::call(tensor);
  c10::InferenceMode normal(false);
  at::Tensor alias = at::empty({0}, tensor.options());
  alias.set_(tensor.storage(), tensor.storage_offset(), tensor.sizes(),
             tensor.strides());
  return alias;
}

void Recorder::record_constant(const at::Tensor& tensor) {
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
                              "torch.ops.aten.detach_.default", std::move(self),
                              {}, "detach_");
  }
  track(tensor, node);
}

}  // namespace capture
}  // namespace fx
