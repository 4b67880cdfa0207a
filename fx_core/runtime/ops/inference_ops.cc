// Built-in ops, part 5: the fused ops the inference passes write
// (plugins/inference: fold_bn, fuse_conv, fuse_linear, fuse_matmul) and the
// InferencePlan binds to
// oneDNN. Each kernel here is the reference: the unfused ATen ops, in the
// order the pass found them, so a graph after the passes stays runnable
// anywhere (GraphModule, Interpreter, fx exec, and torch.fx: they are also
// PyTorch's torch.ops.fx_inference.*) and computes what the original graph
// computed. Targets are torch.ops.fx_inference.NAME (inference_op_names.h;
// fx_inference.NAME, the spelling of before, is the same op).
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
// fx_inference.window_attention(input, qkv_weight, proj_weight,
//     relative_position_bias, window_size, num_heads, shift_size,
//     attention_dropout=0.0, dropout=0.0, qkv_bias=None, proj_bias=None,
//     logit_scale=None)
//   = torchvision.models.swin_transformer.shifted_window_attention(...)
//     (window_attention.h)
// activation: 'none', 'relu', 'hardtanh' (clamp to [min_val, max_val]; relu6
// is hardtanh(0, 6)), 'hardswish', 'silu', 'sigmoid', 'hardsigmoid', 'gelu'
// (F.gelu's default, with erf) and 'gelu_tanh' (F.gelu(approximate='tanh')).
//
// fx_inference.pointwise(inputs, program, scalars=None)
//   = the program's instructions (pointwise_program.h), each the ATen
//     op the fused node was (scalar - tensor is torch.rsub, as Python's
//     Tensor.__rsub__), on tensors and Python numbers.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <string>
#include <string_view>
#include <vector>

#include "fx_core/runtime/ops/builtin_ops.h"
#include "fx_core/runtime/ops/inference_op_names.h"
#include "fx_core/runtime/ops/pointwise_program.h"
#include "fx_core/runtime/ops/window_attention.h"
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

at::Tensor conv2d_kernel(const at::Tensor& input, const at::Tensor& weight,
                         const c10::optional<at::Tensor>& bias,
                         at::IntArrayRef stride, at::IntArrayRef padding,
                         at::IntArrayRef dilation, int64_t groups,
                         const c10::optional<at::Tensor>& residual,
                         c10::string_view activation, double min_val,
                         double max_val) {
  at::Tensor y =
      at::conv2d(input, weight, bias, stride, padding, dilation, groups);
  if (residual) y = at::add(y, *residual);
  return activate("fx_inference.conv2d", y, std::string(activation), min_val,
                  max_val);
}

at::Tensor linear_kernel(const at::Tensor& input, const at::Tensor& weight,
                         const c10::optional<at::Tensor>& bias,
                         const c10::optional<at::Tensor>& residual,
                         c10::string_view activation, double min_val,
                         double max_val) {
  at::Tensor y = at::linear(input, weight, bias);
  if (residual) y = at::add(y, *residual);
  return activate("fx_inference.linear", y, std::string(activation), min_val,
                  max_val);
}

at::Tensor matmul_kernel(const at::Tensor& input, const at::Tensor& other,
                         double scale) {
  at::Tensor y = at::matmul(input, other);
  return scale == 1.0 ? y : at::mul(y, scale);
}

IValue fused_conv2d(OpArgs& a) {
  return conv2d_kernel(a.tensor(0), a.tensor(1), a.optional_tensor(2),
                       a.int_list(3), a.int_list(4), a.int_list(5), a.to_int(6),
                       a.optional_tensor(7), a.to_string(8), a.to_double(9),
                       a.to_double(10));
}

IValue fused_linear(OpArgs& a) {
  return linear_kernel(a.tensor(0), a.tensor(1), a.optional_tensor(2),
                       a.optional_tensor(3), a.to_string(4), a.to_double(5),
                       a.to_double(6));
}

IValue fused_matmul(OpArgs& a) {
  return matmul_kernel(a.tensor(0), a.tensor(1), a.to_double(2));
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

at::Tensor pointwise_kernel(const std::vector<at::Tensor>& inputs,
                            const std::vector<std::string>& text,
                            std::vector<double> scalars) {
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

// The program's text: a list of str.
std::vector<std::string> program_text(const IValue& program) {
  std::vector<std::string> text;
  if (!program.isList()) {
    throw FxError("fx_inference.pointwise: program must be a list of str");
  }
  for (const IValue& s : program.toListRef()) {
    if (!s.isString()) {
      throw FxError("fx_inference.pointwise: program must be a list of str");
    }
    text.push_back(s.toStringRef());
  }
  return text;
}

// The scalars: None or a list (or tuple) of numbers.
std::vector<double> program_scalars(const IValue& value) {
  std::vector<double> scalars;
  if (value.isNone()) return scalars;
  if (!value.isList() && !value.isTuple()) {
    throw FxError("fx_inference.pointwise: scalars must be a list of numbers");
  }
  const auto items = value.isList() ? value.toListRef().vec()
                                    : value.toTupleRef().elements().vec();
  for (const IValue& s : items) {
    if (!s.isDouble() && !s.isInt()) {
      throw FxError("fx_inference.pointwise: scalars must be numbers");
    }
    scalars.push_back(s.isDouble() ? s.toDouble()
                                   : static_cast<double>(s.toInt()));
  }
  return scalars;
}

IValue fused_pointwise(OpArgs& a) {
  return pointwise_kernel(a.tensor_list(0), program_text(a[1]),
                          program_scalars(a[2]));
}

at::Tensor pointwise_op(at::TensorList inputs,
                        std::vector<c10::string_view> program,
                        c10::optional<at::ArrayRef<double>> scalars) {
  std::vector<std::string> text(program.begin(), program.end());
  std::vector<double> numbers;
  if (scalars) numbers.assign(scalars->begin(), scalars->end());
  return pointwise_kernel(inputs.vec(), text, std::move(numbers));
}

}  // namespace

void register_inference_ops(OpRegistry& r) {
  // Under both spellings of each target (inference_op_names.h).
  for (std::string_view prefix : {kInferenceOpPrefix, kOldInferenceOpPrefix}) {
    auto name = [&](const char* op) { return cat(prefix, op); };
    r.add(Opcode::kCallFunction, name("conv2d"),
          "input, weight, bias=None, stride=1, padding=0, dilation=1, "
          "groups=1, residual=None, activation='none', min_val=0.0, "
          "max_val=0.0",
          fused_conv2d);
    r.add(Opcode::kCallFunction, name("pointwise"),
          "inputs, program, scalars=None", fused_pointwise);
    r.add(Opcode::kCallFunction, name("linear"),
          "input, weight, bias=None, residual=None, activation='none', "
          "min_val=0.0, max_val=0.0",
          fused_linear);
    r.add(Opcode::kCallFunction, name("matmul"), "input, other, scale=1.0",
          fused_matmul);
    r.add(Opcode::kCallFunction, name("window_attention"),
          kWindowAttentionSignature, shifted_window_attention_call);
  }
}

}  // namespace fx::ops

// The same ops as PyTorch custom ops, torch.ops.fx_inference.*, in every
// process that links the runtime (the fx_sdk extension too): a graph after
// the inference passes runs in torch.fx. Composite kernels of ATen ops, so
// autograd, the meta device and make_fx see through them.
TORCH_LIBRARY(fx_inference, m) {
  m.def(
      "conv2d(Tensor input, Tensor weight, Tensor? bias=None, "
      "int[2] stride=1, int[2] padding=0, int[2] dilation=1, int groups=1, "
      "Tensor? residual=None, str activation='none', float min_val=0.0, "
      "float max_val=0.0) -> Tensor",
      TORCH_FN(fx::ops::conv2d_kernel));
  m.def(
      "linear(Tensor input, Tensor weight, Tensor? bias=None, "
      "Tensor? residual=None, str activation='none', float min_val=0.0, "
      "float max_val=0.0) -> Tensor",
      TORCH_FN(fx::ops::linear_kernel));
  m.def("matmul(Tensor input, Tensor other, float scale=1.0) -> Tensor",
        TORCH_FN(fx::ops::matmul_kernel));
  m.def(
      "window_attention(Tensor input, Tensor qkv_weight, Tensor proj_weight, "
      "Tensor relative_position_bias, int[] window_size, int num_heads, "
      "int[] shift_size, float attention_dropout=0.0, float dropout=0.0, "
      "Tensor? qkv_bias=None, Tensor? proj_bias=None, "
      "Tensor? logit_scale=None) -> Tensor",
      // A function of another file: registered by its run-time address
      // (TORCH_FN needs a compile-time constant, which it is not under ASan).
      &fx::ops::shifted_window_attention);
  m.def(
      "pointwise(Tensor[] inputs, str[] program, float[]? scalars=None) -> "
      "Tensor",
      TORCH_FN(fx::ops::pointwise_op));
}
