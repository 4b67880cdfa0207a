// The recorder on meta tensors (recorder.h): a meta shadow of each real
// tensor, operators run by LibTorch's meta kernels or meta_rules.h's shape
// rules, and the error naming an operator that cannot run so.
#include <ATen/Functions.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <string>

#include "absl/container/flat_hash_set.h"
#include "fx_core/capture/meta_rules.h"
#include "fx_core/capture/recorder.h"
#include "fx_core/support/error.h"

namespace fx {
namespace capture {

using c10::DispatchKey;
using c10::DispatchKeySet;
using c10::TensorImpl;

at::Tensor Recorder::meta_of(const at::Tensor& tensor) {
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

c10::IValue Recorder::meta_of(const c10::IValue& value) {
  if (value.isTensor()) return meta_of(value.toTensor());
  if (value.isTensorList()) {
    c10::List<at::Tensor> list;
    for (const at::Tensor& t : value.toTensorList()) list.push_back(meta_of(t));
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

void Recorder::run_on_meta(const c10::OperatorHandle& op,
                           torch::jit::Stack* stack) {
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

std::string Recorder::meta_error(const c10::FunctionSchema& schema,
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

}  // namespace capture
}  // namespace fx
