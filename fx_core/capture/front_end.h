// The C++ front end's multi-call spellings that fx::make_fx rewrites to the
// call Python's bindings make for the same source (see README.md):
//
//   C++ source           calls ATen receives            Python records
//   2 - x                empty_like, fill_, sub_        rsub.Scalar(x, 2)
//   2 / x                empty_like, fill_, div_        reciprocal(x) * 2
//   2 % x                empty_like, fill_, remainder_  remainder.Scalar_Tensor
//   torch::tensor({..})  empty, select + fill_ per item  a constant +
//   lift_fresh_copy torch::tensor(2.0)   scalar_tensor                  a
//   constant + lift_fresh_copy
//
// This file names the calls; the recorder (recorder_front_end.cc) follows the
// sequence on the user's calls and records Python's spelling when it completes.
#ifndef FX_CORE_CAPTURE_FRONT_END_H_
#define FX_CORE_CAPTURE_FRONT_END_H_

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

namespace c10 {
struct FunctionSchema;
}  // namespace c10

namespace fx::capture {

enum class FrontEndCall {
  kOther,
  kEmptyLike,         // empty_like(x, memory_format=preserve), nothing else
  kFill,              // fill_.Scalar
  kReverseSub,        // sub_.Tensor
  kReverseDiv,        // div_.Tensor
  kReverseRemainder,  // remainder_.Tensor
  kEmpty,             // empty.memory_format
  kScalarTensor,      // scalar_tensor
  kSelect,            // select.int
  kTo,                // any aten::to overload
  kDetachInPlace,     // detach_
};

// What a call of `schema` may be in the sequences above.
FrontEndCall classify(const c10::FunctionSchema& schema);

// True when the thread runs below autograd alone
// (at::AutoDispatchBelowAutograd, as inside torch::tensor's construction): not
// in the user's own code, the torch:: factories (below ADInplaceOrView too) or
// InferenceMode.
bool below_autograd_outside_inference();

// `scalar OP tensor` as Python calls it (`op` one of the kReverse* calls),
// through the dispatcher, so a capture records it.
at::Tensor python_reverse_scalar(FrontEndCall op, const at::Tensor& tensor,
                                 const c10::Scalar& scalar);

}  // namespace fx::capture

#endif  // FX_CORE_CAPTURE_FRONT_END_H_
