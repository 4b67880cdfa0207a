// The program of an fx_inference.pointwise node (written by the
// fuse_pointwise pass, plugins/inference): a short list of elementwise
// instructions over the node's tensor inputs and a list of numbers.
//
//   fx_inference.pointwise(inputs, program, scalars=None)
//
// `program` is a list of strings, one instruction each, "OP A [B [C]]"
// (words separated by exactly one space, none leading or trailing);
// an operand is `iK` (inputs[K]), `tK` (instruction K's result, K before
// this one) or `sK` (scalars[K]). The node's value is the last
// instruction's. Ops and their operands:
//   add a b, sub a b, mul a b, div a b (true division; b not a scalar when a
//     is one), neg a, relu a, sigmoid a, tanh a, silu a, hardswish a,
//     hardsigmoid a, gelu a (erf form), clamp a lo hi, clamp_min a lo,
//     clamp_max a hi (bounds are scalars; hardtanh and relu6 are clamp).
// A unary op's operand and at least one operand of a binary op are not
// scalars. Example: x * sigmoid(s) is
//   inputs=[x, s], program=['sigmoid i1', 'mul i0 t0'].
//
// parse_pointwise_program checks all of this and throws FxError naming the
// instruction; the reference kernel (runtime/ops/inference_ops.cc) and the
// InferencePlan's kernel (pointwise_kernel.h) both run the parsed form.
#ifndef FX_CORE_RUNTIME_OPS_POINTWISE_PROGRAM_H_
#define FX_CORE_RUNTIME_OPS_POINTWISE_PROGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

namespace fx {

enum class PointwiseOp : uint8_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kNeg,
  kRelu,
  kSigmoid,
  kTanh,
  kSilu,
  kHardswish,
  kHardsigmoid,
  kGelu,
  kClamp,
  kClampMin,
  kClampMax,
};

struct PointwiseOperand {
  enum class Kind : uint8_t { kInput, kTemp, kScalar };
  Kind kind = Kind::kInput;
  int32_t index = 0;
};

struct PointwiseInstr {
  PointwiseOp op = PointwiseOp::kAdd;
  int arity = 0;
  PointwiseOperand operands[3];
};

struct PointwiseProgram {
  std::vector<PointwiseInstr> code;
  std::vector<double> scalars;
  size_t num_inputs = 0;
};

// Parses and checks `text` for a node with `num_inputs` tensor inputs.
PointwiseProgram parse_pointwise_program(const std::vector<std::string>& text,
                                         std::vector<double> scalars,
                                         size_t num_inputs);

// The op's name in the program text ("add", ...).
const char* pointwise_op_name(PointwiseOp op);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_OPS_POINTWISE_PROGRAM_H_
