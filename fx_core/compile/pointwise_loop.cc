// Compiled with -mavx2 -mfma and CPU_CAPABILITY=AVX2 (fx_core/runtime
// BUILD): Vectorized<float> is ATen's AVX2 class here, calling Sleef as
// ATen's own AVX2 kernels do. This file includes nothing from ATen but the
// vector headers, so no other ATen code is compiled for AVX2 through it.
#include "fx_core/compile/pointwise_loop.h"

#include <ATen/cpu/vec/vec.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace fx {
namespace {

using Vec = at::vec::Vectorized<float>;
constexpr int64_t kLanes = Vec::size();
constexpr int64_t kBlock = 256;  // elements per pass over the program

// Where an operand's values for the current block are.
struct Lane {
  const float* ptr = nullptr;  // contiguous values, or null: `value`
  float value = 0.0f;
};

Vec load(const Lane& l, int64_t i, int64_t n) {
  if (l.ptr == nullptr) return Vec(l.value);
  return n >= kLanes ? Vec::loadu(l.ptr + i) : Vec::loadu(l.ptr + i, n);
}

// ATen's vectorized CPU formulas (UnaryOpsKernel.cpp, Activation.cpp,
// BinaryOpsKernel.cpp, TensorCompareKernel.cpp in torch 1.13).
Vec apply(PointwiseOp op, const Vec& a, const Vec& b, const Vec& c) {
  const Vec zero(0.0f), one(1.0f), three(3.0f), six(6.0f);
  switch (op) {
    case PointwiseOp::kAdd:
      return a + b;
    case PointwiseOp::kSub:
      return a - b;
    case PointwiseOp::kMul:
      return a * b;
    case PointwiseOp::kDiv:
      return a / b;
    case PointwiseOp::kNeg:
      return a.neg();
    case PointwiseOp::kRelu:
      return at::vec::clamp_min(a, zero);
    case PointwiseOp::kSigmoid:
      return ((zero - a).exp() + one).reciprocal();
    case PointwiseOp::kTanh:
      return a.tanh();
    case PointwiseOp::kSilu:
      return a / (one + a.neg().exp());
    case PointwiseOp::kHardswish:
      return a * at::vec::minimum(at::vec::clamp_min(a + three, zero), six) /
             six;
    case PointwiseOp::kHardsigmoid:
      return at::vec::minimum(at::vec::clamp_min(a + three, zero), six) / six;
    case PointwiseOp::kGelu:
      return a * Vec(0.5f) *
             (one + (a * Vec(static_cast<float>(M_SQRT1_2))).erf());
    case PointwiseOp::kClamp:
      return at::vec::clamp(a, b, c);
    case PointwiseOp::kClampMin:
      return at::vec::clamp_min(a, b);
    case PointwiseOp::kClampMax:
      return at::vec::clamp_max(a, b);
  }
  return a;
}

class Evaluator {
 public:
  explicit Evaluator(const PointwiseProgram& p)
      : p_(p),
        temps_(p.code.size() * kBlock),
        gathered_(p.num_inputs * kBlock),
        out_tmp_(kBlock) {}

  // n elements (n <= kBlock) from in[k] (stride in_stride[k] bytes) into out
  // (stride out_stride).
  void block(char* out, int64_t out_stride, char* const* in,
             const int64_t* in_stride, int64_t n) {
    std::vector<Lane>& inputs = inputs_;
    inputs.resize(p_.num_inputs);
    for (size_t k = 0; k < p_.num_inputs; ++k) {
      inputs[k] = input_lane(k, in[k], in_stride[k], n);
    }
    const size_t last = p_.code.size() - 1;
    const bool direct_out = out_stride == sizeof(float);
    for (size_t j = 0; j <= last; ++j) {
      const PointwiseInstr& ins = p_.code[j];
      Lane ops[3];
      for (int o = 0; o < ins.arity; ++o) ops[o] = lane(ins.operands[o]);
      float* dst = j == last ? (direct_out ? reinterpret_cast<float*>(out)
                                           : out_tmp_.data())
                             : &temps_[j * kBlock];
      for (int64_t i = 0; i < n; i += kLanes) {
        const int64_t m = std::min(kLanes, n - i);
        Vec r = apply(ins.op, load(ops[0], i, m), load(ops[1], i, m),
                      load(ops[2], i, m));
        if (m == kLanes) {
          r.store(dst + i);
        } else {
          r.store(dst + i, m);
        }
      }
    }
    if (!direct_out) {
      for (int64_t i = 0; i < n; ++i) {
        *reinterpret_cast<float*>(out + i * out_stride) = out_tmp_[i];
      }
    }
  }

 private:
  Lane input_lane(size_t k, char* base, int64_t stride, int64_t n) {
    Lane l;
    if (stride == 0) {
      l.value = *reinterpret_cast<const float*>(base);
    } else if (stride == sizeof(float)) {
      l.ptr = reinterpret_cast<const float*>(base);
    } else {
      float* g = &gathered_[k * kBlock];
      for (int64_t i = 0; i < n; ++i) {
        g[i] = *reinterpret_cast<const float*>(base + i * stride);
      }
      l.ptr = g;
    }
    return l;
  }
  Lane lane(const PointwiseOperand& o) const {
    Lane l;
    switch (o.kind) {
      case PointwiseOperand::Kind::kInput:
        return inputs_[o.index];
      case PointwiseOperand::Kind::kTemp:
        l.ptr = &temps_[o.index * kBlock];
        return l;
      case PointwiseOperand::Kind::kScalar:
        l.value = static_cast<float>(p_.scalars[o.index]);
        return l;
    }
    return l;
  }

  const PointwiseProgram& p_;
  std::vector<float> temps_, gathered_, out_tmp_;
  std::vector<Lane> inputs_;
};

}  // namespace

bool pointwise_loop_supported() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

void pointwise_loop(const PointwiseProgram& program, char** data,
                    const int64_t* strides, int64_t size0, int64_t size1) {
  const size_t nt = 1 + program.num_inputs;
  Evaluator eval(program);
  std::vector<char*> in(program.num_inputs);
  for (int64_t row = 0; row < size1; ++row) {
    for (int64_t start = 0; start < size0; start += kBlock) {
      const int64_t n = std::min(kBlock, size0 - start);
      char* out = data[0] + row * strides[nt] + start * strides[0];
      for (size_t k = 0; k < program.num_inputs; ++k) {
        in[k] =
            data[1 + k] + row * strides[nt + 1 + k] + start * strides[1 + k];
      }
      eval.block(out, strides[0], in.data(), strides + 1, n);
    }
  }
}

}  // namespace fx
