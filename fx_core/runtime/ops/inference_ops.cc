// Built-in ops, part 5: the fused ops the inference passes write
// (plugins/inference: fold_bn, fuse_conv, fuse_linear, fuse_matmul) and the
// InferencePlan binds to
// oneDNN. Each kernel here is the reference: the unfused ATen ops, in the
// order the pass found them, so a graph after the passes stays runnable
// anywhere (GraphModule, Interpreter, fx exec) and computes what the
// original graph computed.
//
// fx_inference.conv2d(input, weight, bias=None, stride=1, padding=0,
//                     dilation=1, groups=1, residual=None,
//                     activation='none', min_val=0.0, max_val=0.0)
//   = act(torch.conv2d(input, weight, bias, stride, padding, dilation,
//                      groups) [+ residual])
// fx_inference.linear(input, weight, bias=None, residual=None,
//                     activation='none', min_val=0.0, max_val=0.0)
//   = act(torch.nn.functional.linear(input, weight, bias) [+ residual])
// fx_inference.matmul(input, other, scale=1.0)
//   = torch.matmul(input, other) [* scale, when scale != 1]
// activation: 'none', 'relu', 'hardtanh' (clamp to [min_val, max_val]; relu6
// is hardtanh(0, 6)), 'hardswish', 'silu', 'sigmoid', 'hardsigmoid', 'gelu'
// (F.gelu's default, with erf) and 'gelu_tanh' (F.gelu(approximate='tanh')).
//
// fx_inference.pointwise(inputs, program, scalars=None)
//   = the program's instructions (plan/pointwise_program.h), each the ATen
//     op the fused node was (scalar - tensor is torch.rsub, as Python's
//     Tensor.__rsub__), on tensors and Python numbers.
#include <ATen/ATen.h>

#include <string>

#include "fx_core/runtime/ops/builtin_ops.h"
#include "fx_core/runtime/plan/pointwise_program.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx::ops {
namespace {

using c10::IValue;

// `x` through the activation named `name` (not in place: x may be shared).
at::Tensor activate(const char* op, const at::Tensor& x,
                    const std::string& name, double min_val, double max_val) {
  if (name == "none") return x;
  if (name == "relu") return at::relu(x);
  if (name == "hardtanh") return at::hardtanh(x, min_val, max_val);
  if (name == "hardswish") return at::hardswish(x);
  if (name == "silu") return at::silu(x);
  if (name == "sigmoid") return at::sigmoid(x);
  if (name == "hardsigmoid") return at::hardsigmoid(x);
  if (name == "gelu") return at::gelu(x, "none");
  if (name == "gelu_tanh") return at::gelu(x, "tanh");
  throw FxError(cat(op, ": unknown activation '", name,
                    "' (expected none, relu, hardtanh, hardswish, silu, "
                    "sigmoid, hardsigmoid, gelu or gelu_tanh)"));
}

IValue fused_conv2d(OpArgs& a) {
  at::Tensor y =
      at::conv2d(a.tensor(0), a.tensor(1), a.optional_tensor(2), a.int_list(3),
                 a.int_list(4), a.int_list(5), a.to_int(6));
  if (c10::optional<at::Tensor> residual = a.optional_tensor(7)) {
    y = at::add(y, *residual);
  }
  return activate("fx_inference.conv2d", y, a.to_string(8), a.to_double(9),
                  a.to_double(10));
}

IValue fused_linear(OpArgs& a) {
  at::Tensor y = at::linear(a.tensor(0), a.tensor(1), a.optional_tensor(2));
  if (c10::optional<at::Tensor> residual = a.optional_tensor(3)) {
    y = at::add(y, *residual);
  }
  return activate("fx_inference.linear", y, a.to_string(4), a.to_double(5),
                  a.to_double(6));
}

IValue fused_matmul(OpArgs& a) {
  at::Tensor y = at::matmul(a.tensor(0), a.tensor(1));
  const double scale = a.to_double(2);
  return scale == 1.0 ? y : at::mul(y, scale);
}

// An instruction's operand: a tensor, or a number.
struct PointwiseValue {
  at::Tensor tensor;
  c10::Scalar number;
  bool is_number = false;
};

at::Tensor apply_unary(PointwiseOp op, const at::Tensor& x) {
  switch (op) {
    case PointwiseOp::kNeg:
      return at::neg(x);
    case PointwiseOp::kRelu:
      return at::relu(x);
    case PointwiseOp::kSigmoid:
      return at::sigmoid(x);
    case PointwiseOp::kTanh:
      return at::tanh(x);
    case PointwiseOp::kSilu:
      return at::silu(x);
    case PointwiseOp::kHardswish:
      return at::hardswish(x);
    case PointwiseOp::kHardsigmoid:
      return at::hardsigmoid(x);
    default:
      return at::gelu(x);
  }
}

// A binary op; `a` or `b` may be a number (not both, not a for div).
at::Tensor apply_binary(PointwiseOp op, const PointwiseValue& a,
                        const PointwiseValue& b) {
  if (a.is_number) {  // number OP tensor
    switch (op) {
      case PointwiseOp::kAdd:
        return at::add(b.tensor, a.number);
      case PointwiseOp::kSub:
        return at::rsub(b.tensor, a.number);
      default:
        return at::mul(b.tensor, a.number);
    }
  }
  if (b.is_number) {
    switch (op) {
      case PointwiseOp::kAdd:
        return at::add(a.tensor, b.number);
      case PointwiseOp::kSub:
        return at::sub(a.tensor, b.number);
      case PointwiseOp::kMul:
        return at::mul(a.tensor, b.number);
      default:
        return at::div(a.tensor, b.number);
    }
  }
  switch (op) {
    case PointwiseOp::kAdd:
      return at::add(a.tensor, b.tensor);
    case PointwiseOp::kSub:
      return at::sub(a.tensor, b.tensor);
    case PointwiseOp::kMul:
      return at::mul(a.tensor, b.tensor);
    default:
      return at::div(a.tensor, b.tensor);
  }
}

at::Tensor run_instruction(const PointwiseInstr& instr,
                           const std::vector<PointwiseValue>& v) {
  switch (instr.op) {
    case PointwiseOp::kAdd:
    case PointwiseOp::kSub:
    case PointwiseOp::kMul:
    case PointwiseOp::kDiv:
      return apply_binary(instr.op, v[0], v[1]);
    case PointwiseOp::kClamp:
      return at::clamp(v[0].tensor, v[1].number, v[2].number);
    case PointwiseOp::kClampMin:
      return at::clamp_min(v[0].tensor, v[1].number);
    case PointwiseOp::kClampMax:
      return at::clamp_max(v[0].tensor, v[1].number);
    default:
      return apply_unary(instr.op, v[0].tensor);
  }
}

IValue fused_pointwise(OpArgs& a) {
  std::vector<at::Tensor> inputs = a.tensor_list(0);
  std::vector<std::string> text;
  std::vector<double> scalars;
  if (!a[1].isList()) {
    throw FxError("fx_inference.pointwise: program must be a list of str");
  }
  for (const IValue& s : a[1].toListRef()) {
    if (!s.isString()) {
      throw FxError("fx_inference.pointwise: program must be a list of str");
    }
    text.push_back(s.toStringRef());
  }
  if (a[2].isList() || a[2].isTuple()) {
    const auto items = a[2].isList() ? a[2].toListRef().vec()
                                     : a[2].toTupleRef().elements().vec();
    for (const IValue& s : items) {
      if (!s.isDouble() && !s.isInt()) {
        throw FxError("fx_inference.pointwise: scalars must be numbers");
      }
      scalars.push_back(s.isDouble() ? s.toDouble()
                                     : static_cast<double>(s.toInt()));
    }
  } else if (!a[2].isNone()) {
    throw FxError("fx_inference.pointwise: scalars must be a list of numbers");
  }
  PointwiseProgram p =
      parse_pointwise_program(text, std::move(scalars), inputs.size());
  std::vector<at::Tensor> temps;
  std::vector<PointwiseValue> operands(3);
  for (const PointwiseInstr& instr : p.code) {
    for (int i = 0; i < instr.arity; ++i) {
      const PointwiseOperand& o = instr.operands[i];
      PointwiseValue& v = operands[i];
      v.is_number = o.kind == PointwiseOperand::Kind::kScalar;
      if (v.is_number) {
        v.number = p.scalars[o.index];
      } else {
        v.tensor = o.kind == PointwiseOperand::Kind::kInput ? inputs[o.index]
                                                            : temps[o.index];
      }
    }
    temps.push_back(run_instruction(instr, operands));
  }
  return temps.back();
}

}  // namespace

void register_inference_ops(OpRegistry& r) {
  r.add(Opcode::kCallFunction, "fx_inference.conv2d",
        "input, weight, bias=None, stride=1, padding=0, dilation=1, "
        "groups=1, residual=None, activation='none', min_val=0.0, "
        "max_val=0.0",
        fused_conv2d);
  r.add(Opcode::kCallFunction, "fx_inference.pointwise",
        "inputs, program, scalars=None", fused_pointwise);
  r.add(Opcode::kCallFunction, "fx_inference.linear",
        "input, weight, bias=None, residual=None, activation='none', "
        "min_val=0.0, max_val=0.0",
        fused_linear);
  r.add(Opcode::kCallFunction, "fx_inference.matmul", "input, other, scale=1.0",
        fused_matmul);
}

}  // namespace fx::ops
