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

// The lane's values at [i, i + kLanes), or its broadcast value.
inline Vec load(const Lane& l, const Vec& broadcast, int64_t i) {
  return l.ptr == nullptr ? broadcast : Vec::loadu(l.ptr + i);
}

// The last n < kLanes values.
inline Vec load_tail(const Lane& l, int64_t i, int64_t n) {
  return l.ptr == nullptr ? Vec(l.value) : Vec::loadu(l.ptr + i, n);
}

// dst[0, n) = f(a, b, c) lane by lane: the instruction's op is chosen once
// a block (f is a lambda of the op), not once a vector.
template <typename F>
inline void map(F f, const Lane& a, const Lane& b, const Lane& c, float* dst,
                int64_t n) {
  const Vec va(a.value), vb(b.value), vc(c.value);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    f(load(a, va, i), load(b, vb, i), load(c, vc, i)).store(dst + i);
  }
  if (i < n) {
    const int64_t m = n - i;
    f(load_tail(a, i, m), load_tail(b, i, m), load_tail(c, i, m))
        .store(dst + i, m);
  }
}

// ATen's vectorized CPU formulas (UnaryOpsKernel.cpp, Activation.cpp,
// BinaryOpsKernel.cpp, TensorCompareKernel.cpp in torch 1.13).
void apply(PointwiseOp op, const Lane& a, const Lane& b, const Lane& c,
           float* dst, int64_t n) {
  const Vec zero(0.0f), one(1.0f), three(3.0f), six(6.0f);
  switch (op) {
    case PointwiseOp::kAdd:
      return map([](Vec x, Vec y, Vec) { return x + y; }, a, b, c, dst, n);
    case PointwiseOp::kSub:
      return map([](Vec x, Vec y, Vec) { return x - y; }, a, b, c, dst, n);
    case PointwiseOp::kMul:
      return map([](Vec x, Vec y, Vec) { return x * y; }, a, b, c, dst, n);
    case PointwiseOp::kDiv:
      return map([](Vec x, Vec y, Vec) { return x / y; }, a, b, c, dst, n);
    case PointwiseOp::kNeg:
      return map([](Vec x, Vec, Vec) { return x.neg(); }, a, b, c, dst, n);
    case PointwiseOp::kRelu:
      return map([&](Vec x, Vec, Vec) { return at::vec::clamp_min(x, zero); },
                 a, b, c, dst, n);
    case PointwiseOp::kSigmoid:
      return map([&](Vec x, Vec,
                     Vec) { return ((zero - x).exp() + one).reciprocal(); },
                 a, b, c, dst, n);
    case PointwiseOp::kTanh:
      return map([](Vec x, Vec, Vec) { return x.tanh(); }, a, b, c, dst, n);
    case PointwiseOp::kSilu:
      return map([&](Vec x, Vec, Vec) { return x / (one + x.neg().exp()); }, a,
                 b, c, dst, n);
    case PointwiseOp::kHardswish:
      return map(
          [&](Vec x, Vec, Vec) {
            return x *
                   at::vec::minimum(at::vec::clamp_min(x + three, zero), six) /
                   six;
          },
          a, b, c, dst, n);
    case PointwiseOp::kHardsigmoid:
      return map(
          [&](Vec x, Vec, Vec) {
            return at::vec::minimum(at::vec::clamp_min(x + three, zero), six) /
                   six;
          },
          a, b, c, dst, n);
    case PointwiseOp::kGelu:
      return map(
          [&](Vec x, Vec, Vec) {
            return x * Vec(0.5f) *
                   (one + (x * Vec(static_cast<float>(M_SQRT1_2))).erf());
          },
          a, b, c, dst, n);
    case PointwiseOp::kClamp:
      return map(
          [](Vec x, Vec lo, Vec hi) { return at::vec::clamp(x, lo, hi); }, a, b,
          c, dst, n);
    case PointwiseOp::kClampMin:
      return map([](Vec x, Vec lo, Vec) { return at::vec::clamp_min(x, lo); },
                 a, b, c, dst, n);
    case PointwiseOp::kClampMax:
      return map([](Vec x, Vec hi, Vec) { return at::vec::clamp_max(x, hi); },
                 a, b, c, dst, n);
  }
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
      apply(ins.op, ops[0], ops[1], ops[2], dst, n);
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
