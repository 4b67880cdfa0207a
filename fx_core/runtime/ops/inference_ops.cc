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
#include <ATen/ATen.h>

#include <string>

#include "fx_core/runtime/ops/builtin_ops.h"
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

}  // namespace

void register_inference_ops(OpRegistry& r) {
  r.add(Opcode::kCallFunction, "fx_inference.conv2d",
        "input, weight, bias=None, stride=1, padding=0, dilation=1, "
        "groups=1, residual=None, activation='none', min_val=0.0, "
        "max_val=0.0",
        fused_conv2d);
  r.add(Opcode::kCallFunction, "fx_inference.linear",
        "input, weight, bias=None, residual=None, activation='none', "
        "min_val=0.0, max_val=0.0",
        fused_linear);
  r.add(Opcode::kCallFunction, "fx_inference.matmul", "input, other, scale=1.0",
        fused_matmul);
}

}  // namespace fx::ops
