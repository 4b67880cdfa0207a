// The elementwise ATen CPU kernels the InferencePlan calls directly, and how
// a call node binds to one.
//
// A direct kernel is ATen's own CPU kernel for add, sub, mul, true div,
// clamp (relu is clamp_min(x, 0)), sigmoid, tanh or neg, called through its
// DispatchStub on a TensorIterator the plan builds once, as the structured
// `at::cpu::*_out` kernel builds it (make_iterator), so a run does no
// dispatch, no iterator set-up and no allocation and computes bitwise what
// the op registry's kernel computes. fx_inference.pointwise also binds here
// (DirectOp::kPointwise) but runs its own kernel (pointwise_kernel.h).
//
// Binding a node: match_direct_target() names the kernel its target calls
// for (torch.*, operator.*, torch.nn.functional.relu or a Tensor method);
// bind_scalars() checks its non-tensor arguments are constants the kernel
// takes and extracts them; result_fits() checks the recorded result layout.
// Anything they refuse stays with the registry's kernel.
#ifndef FX_CORE_COMPILE_DIRECT_KERNELS_H_
#define FX_CORE_COMPILE_DIRECT_KERNELS_H_

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fx_core/compile/tensor_meta.h"
#include "fx_core/compile/value_source.h"
#include "fx_core/runtime/op_registry.h"

namespace at {
class TensorIterator;
}  // namespace at

namespace fx {

enum class DirectOp : uint8_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kClampMin,  // relu is clamp_min(x, 0) in ATen
  kClampMax,
  kClamp,
  kSigmoid,
  kTanh,
  kNeg,
  kPointwise,  // fx_inference.pointwise (pointwise_kernel.h)
};

// The direct kernel a call target names and its tensor operand count
// (kPointwise: 0, its operands are its `inputs` list), before its other
// arguments are checked (clamp becomes kClampMin / kClampMax once its bounds
// are known).
struct DirectMatch {
  DirectOp op;
  size_t num_operands;
};
std::optional<DirectMatch> match_direct_target(const OpDef& def);

// The arguments a direct kernel takes besides its tensor operands (`params`
// of a call to `target`), which must be constants it supports: add/sub's
// alpha, div's rounding_mode (None), F.relu's inplace (False), clamp's
// bounds (numbers, not NaN, not both None). Sets *op (clamp), *s1 (alpha;
// relu's and clamp's lower bound) and *s2 (clamp's upper bound).
bool bind_scalars(const std::string& target,
                  const std::vector<ValueSource>& params, DirectOp* op,
                  c10::Scalar* s1, c10::Scalar* s2);

// Whether `op` can write `out`: a plain CPU tensor of a dtype the kernel
// computes as ATen does (floating point for div, sigmoid, tanh; bool only
// for add and mul; no complex; float32 for kPointwise).
bool result_fits(DirectOp op, const TensorMeta& out);

// The TensorIterator ATen's structured kernel builds for `op` (not
// kPointwise).
at::TensorIterator make_iterator(DirectOp op, at::Tensor& out,
                                 const std::vector<at::Tensor>& operands);

// Whether `it` works on `out` and `operands` themselves: no operand replaced
// by a cast copy, nothing resized.
bool iterates_in_place(const at::TensorIterator& it, const at::Tensor& out,
                       const std::vector<at::Tensor>& operands);

// Runs `op`'s DispatchStub on the iterator's current operands.
void run_stub(DirectOp op, at::TensorIterator& it, const c10::Scalar& s1,
              const c10::Scalar& s2);

// ATen's copy kernel (copy_stub) on an iterator built over (dst, src) of
// one dtype.
void run_copy(at::TensorIterator& it);

// Whether `v` is a Python number (int, float or bool).
bool is_number(const c10::IValue& v);
c10::Scalar to_scalar(const c10::IValue& v);
// ATen's wrapped-number tensor for a number operand, as the registry's
// kernels build it.
at::Tensor wrap_number(const c10::IValue& v);
// Parameter i's value when it is a constant, else null.
const c10::IValue* constant_param(const std::vector<ValueSource>& params,
                                  size_t i);

}  // namespace fx

#endif  // FX_CORE_COMPILE_DIRECT_KERNELS_H_
