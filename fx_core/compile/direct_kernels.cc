// The DispatchStub declarations must match how LibTorch was built: on x86-64
// its kernels come in DEFAULT, AVX2 and AVX512 variants, and
// DispatchStubImpl::get_call_ptr takes one pointer per variant.
#if defined(__x86_64__) && !defined(HAVE_AVX2_CPU_DEFINITION)
#define HAVE_AVX512_CPU_DEFINITION
#define HAVE_AVX2_CPU_DEFINITION
#endif

#include "fx_core/compile/direct_kernels.h"

#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>
#include <ATen/native/BinaryOps.h>
#include <ATen/native/Copy.h>
#include <ATen/native/UnaryOps.h>

#include <cmath>
#include <initializer_list>

#include "fx_core/runtime/ops/inference_op_names.h"

// ATen/native/TensorCompare.h declares these too, but it cannot be included
// with UnaryOps.h (both declare clamp_stub).
namespace at::native {
DECLARE_DISPATCH(void (*)(TensorIteratorBase&, const c10::Scalar&,
                          const c10::Scalar&),
                 clamp_scalar_stub);
DECLARE_DISPATCH(void (*)(TensorIteratorBase&, c10::Scalar),
                 clamp_min_scalar_stub);
DECLARE_DISPATCH(void (*)(TensorIteratorBase&, c10::Scalar),
                 clamp_max_scalar_stub);
}  // namespace at::native

namespace fx {

using Source = ValueSource;

bool is_number(const c10::IValue& v) {
  return v.isDouble() || v.isInt() || v.isBool();
}

c10::Scalar to_scalar(const c10::IValue& v) {
  if (v.isDouble()) return v.toDouble();
  if (v.isBool()) return v.toBool();
  return v.toInt();
}

// ATen's wrapped_scalar_tensor, as the registry's kernels build it.
at::Tensor wrap_number(const c10::IValue& v) {
  at::Tensor t = v.isDouble() ? at::scalar_tensor(v.toDouble(), at::kDouble)
                 : v.isBool() ? at::scalar_tensor(v.toBool(), at::kBool)
                              : at::scalar_tensor(v.toInt(), at::kLong);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

std::optional<DirectMatch> match_direct_target(const OpDef& def) {
  const std::string& t = def.target;
  const bool method = def.op == Opcode::kCallMethod;
  auto is = [&](std::initializer_list<const char*> functions,
                const char* method_name) {
    if (method) return t == method_name;
    for (const char* f : functions) {
      if (t == f) return true;
    }
    return false;
  };
  if (is({"operator.add", "torch.add"}, "add")) return {{DirectOp::kAdd, 2}};
  if (is({"operator.sub", "torch.sub"}, "sub")) return {{DirectOp::kSub, 2}};
  if (is({"operator.mul", "torch.mul"}, "mul")) return {{DirectOp::kMul, 2}};
  if (is({"operator.truediv", "torch.div"}, "div")) {
    return {{DirectOp::kDiv, 2}};
  }
  if (is({"torch.relu", "torch.nn.functional.relu"}, "relu")) {
    return {{DirectOp::kClampMin, 1}};
  }
  if (is({"torch.clamp"}, "clamp")) return {{DirectOp::kClamp, 1}};
  if (is({"torch.sigmoid"}, "sigmoid")) return {{DirectOp::kSigmoid, 1}};
  if (is({"torch.tanh"}, "tanh")) return {{DirectOp::kTanh, 1}};
  if (is({"torch.neg", "operator.neg"}, "neg")) return {{DirectOp::kNeg, 1}};
  if (!method && inference_op(t) == "pointwise") {
    return {{DirectOp::kPointwise, 0}};
  }
  return std::nullopt;
}

const c10::IValue* constant_param(const std::vector<Source>& p, size_t i) {
  return i < p.size() && p[i].kind == Source::Kind::kConstant ? &p[i].constant
                                                              : nullptr;
}

namespace {

// clamp's bounds: numbers (not NaN) or None, not both None. Sets *op to the
// kernel the bounds call for.
bool bind_clamp_bounds(const std::vector<Source>& p, DirectOp* op,
                       c10::Scalar* s1, c10::Scalar* s2) {
  const c10::IValue* lo = constant_param(p, 1);
  const c10::IValue* hi = constant_param(p, 2);
  if (lo == nullptr || hi == nullptr) return false;
  if (!(lo->isNone() || is_number(*lo)) || !(hi->isNone() || is_number(*hi))) {
    return false;
  }
  if (lo->isNone() && hi->isNone()) return false;
  if (!lo->isNone()) *s1 = to_scalar(*lo);
  if (!hi->isNone()) *s2 = to_scalar(*hi);
  for (const c10::IValue* b : {lo, hi}) {
    if (b->isDouble() && std::isnan(b->toDouble())) return false;
  }
  *op = lo->isNone()   ? DirectOp::kClampMax
        : hi->isNone() ? DirectOp::kClampMin
                       : DirectOp::kClamp;
  return true;
}

}  // namespace

bool bind_scalars(const std::string& t, const std::vector<Source>& p,
                  DirectOp* op, c10::Scalar* s1, c10::Scalar* s2) {
  switch (*op) {
    case DirectOp::kAdd:
    case DirectOp::kSub: {
      *s1 = c10::Scalar(int64_t{1});
      if (t == "operator.add" || t == "operator.sub") return true;
      const c10::IValue* alpha = constant_param(p, 2);
      if (alpha == nullptr || !is_number(*alpha)) return false;
      *s1 = to_scalar(*alpha);
      return true;
    }
    case DirectOp::kDiv: {
      if (t == "operator.truediv") return true;
      const c10::IValue* mode = constant_param(p, 2);
      return mode != nullptr && mode->isNone();
    }
    case DirectOp::kClampMin: {  // relu
      *s1 = c10::Scalar(int64_t{0});
      if (t != "torch.nn.functional.relu") return true;
      const c10::IValue* inplace = constant_param(p, 1);
      return inplace != nullptr && inplace->isBool() && !inplace->toBool();
    }
    case DirectOp::kClamp:
      return bind_clamp_bounds(p, op, s1, s2);
    default:
      return true;
  }
}

bool result_fits(DirectOp op, const TensorMeta& out) {
  if (!out.is_tensor || !out.plain) return false;
  if (op == DirectOp::kPointwise) return out.dtype == c10::kFloat;
  const bool float_op =
      op == DirectOp::kDiv || op == DirectOp::kSigmoid || op == DirectOp::kTanh;
  if (float_op && !c10::isFloatingType(out.dtype)) return false;
  if (out.dtype == c10::kBool && op != DirectOp::kAdd && op != DirectOp::kMul) {
    return false;
  }
  return !c10::isComplexType(out.dtype);
}

at::TensorIterator make_iterator(DirectOp op, at::Tensor& out,
                                 const std::vector<at::Tensor>& operands) {
  switch (op) {
    case DirectOp::kAdd:
    case DirectOp::kSub:
    case DirectOp::kMul:
      return at::TensorIterator::binary_op(out, operands[0], operands[1]);
    case DirectOp::kDiv:
      return at::TensorIterator::binary_float_op(out, operands[0], operands[1]);
    case DirectOp::kSigmoid:
    case DirectOp::kTanh:
      return at::TensorIterator::unary_float_op(out, operands[0]);
    default:
      return at::TensorIterator::unary_op(out, operands[0]);
  }
}

bool iterates_in_place(const at::TensorIterator& it, const at::Tensor& out,
                       const std::vector<at::Tensor>& operands) {
  if (it.noutputs() != 1 ||
      it.ntensors() != static_cast<int>(1 + operands.size()) ||
      !it.output_base(0).is_same(out)) {
    return false;
  }
  for (size_t j = 0; j < operands.size(); ++j) {
    if (operands[j].unsafeGetTensorImpl()->is_wrapped_number()) continue;
    if (!it.input_base(static_cast<int>(j)).is_same(operands[j])) return false;
  }
  return true;
}

void run_copy(at::TensorIterator& it) {
  at::native::copy_stub(c10::kCPU, it, /*non_blocking=*/false);
}

void run_stub(DirectOp op, at::TensorIterator& it, const c10::Scalar& s1,
              const c10::Scalar& s2) {
  switch (op) {
    case DirectOp::kAdd:
      at::native::add_stub(c10::kCPU, it, s1);
      break;
    case DirectOp::kSub:
      at::native::add_stub(c10::kCPU, it, -s1);
      break;
    case DirectOp::kMul:
      at::native::mul_stub(c10::kCPU, it);
      break;
    case DirectOp::kDiv:
      at::native::div_true_stub(c10::kCPU, it);
      break;
    case DirectOp::kClampMin:
      at::native::clamp_min_scalar_stub(c10::kCPU, it, s1);
      break;
    case DirectOp::kClampMax:
      at::native::clamp_max_scalar_stub(c10::kCPU, it, s2);
      break;
    case DirectOp::kClamp:
      at::native::clamp_scalar_stub(c10::kCPU, it, s1, s2);
      break;
    case DirectOp::kSigmoid:
      at::native::sigmoid_stub(c10::kCPU, it);
      break;
    case DirectOp::kTanh:
      at::native::tanh_stub(c10::kCPU, it);
      break;
    case DirectOp::kNeg:
      at::native::neg_stub(c10::kCPU, it);
      break;
    case DirectOp::kPointwise:  // run by its PointwiseKernel
      break;
  }
}

}  // namespace fx
