#include "fx_core/capture/front_end.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "fx_core/support/error.h"

namespace fx::capture {

namespace {

const absl::flat_hash_map<const c10::FunctionSchema*, FrontEndCall>&
calls_by_schema() {
  static const auto* calls = [] {
    struct Entry {
      const char* name;
      const char* overload;
      FrontEndCall kind;
    };
    const Entry entries[] = {
        {"aten::empty_like", "", FrontEndCall::kEmptyLike},
        {"aten::fill_", "Scalar", FrontEndCall::kFill},
        {"aten::sub_", "Tensor", FrontEndCall::kReverseSub},
        {"aten::div_", "Tensor", FrontEndCall::kReverseDiv},
        {"aten::remainder_", "Tensor", FrontEndCall::kReverseRemainder},
        {"aten::empty", "memory_format", FrontEndCall::kEmpty},
        {"aten::scalar_tensor", "", FrontEndCall::kScalarTensor},
        {"aten::select", "int", FrontEndCall::kSelect},
        {"aten::detach_", "", FrontEndCall::kDetachInPlace},
    };
    auto* map =
        new absl::flat_hash_map<const c10::FunctionSchema*, FrontEndCall>();
    for (const Entry& entry : entries) {
      const auto& handle = c10::Dispatcher::singleton().findSchemaOrThrow(
          entry.name, entry.overload);
      (*map)[&handle.schema()] = entry.kind;
    }
    return map;
  }();
  return *calls;
}

}  // namespace

FrontEndCall classify(const c10::FunctionSchema& schema) {
  const auto& calls = calls_by_schema();
  auto found = calls.find(&schema);
  if (found != calls.end()) return found->second;
  return schema.name() == "aten::to" ? FrontEndCall::kTo : FrontEndCall::kOther;
}

bool below_autograd_outside_inference() {
  // at::AutoDispatchBelowAutograd excludes autograd alone; the torch::
  // factories' AutoDispatchBelowADInplaceOrView and InferenceMode exclude
  // ADInplaceOrView too.
  return c10::impl::tls_is_dispatch_key_excluded(
             c10::DispatchKey::AutogradFunctionality) &&
         !c10::impl::tls_is_dispatch_key_excluded(
             c10::DispatchKey::ADInplaceOrView) &&
         !c10::InferenceMode::is_enabled();
}

at::Tensor python_reverse_scalar(FrontEndCall op, const at::Tensor& tensor,
                                 const c10::Scalar& scalar) {
  switch (op) {
    case FrontEndCall::kReverseSub:
      return at::rsub(tensor, scalar);
    case FrontEndCall::kReverseDiv:
      return at::mul(at::reciprocal(tensor), scalar);
    case FrontEndCall::kReverseRemainder:
      return at::remainder(scalar, tensor);
    default:
      throw FxError("make_fx: not a reversed scalar operator");
  }
}

}  // namespace fx::capture
