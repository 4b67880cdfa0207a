// Compiled with -mavx2 -mfma and CPU_CAPABILITY=AVX2 (fx_core/runtime
// BUILD): Vectorized<float> is ATen's AVX2 class here, calling Sleef as
// ATen's own AVX2 kernels do. This file includes nothing from ATen but the
// vector headers, so no other ATen code is compiled for AVX2 through it.
//
// How a call is evaluated. The iterator's 2-d chunk is size1 rows of size0
// elements. A block is either part of one long row (up to a block's size)
// or several whole short rows (up to a block's size in all), so a
// channels_last tensor's rows of C channels are not evaluated one row at a
// time. Each instruction runs over the whole block before the next (its op
// chosen once a block); every operand is a row pointer and a row step:
//   - an input whose elements are adjacent along the row is read in place,
//     whatever its step between rows (a slice of a wider concatenation),
//     and a step of 0 for an input broadcast across rows (a per-channel
//     scale on channels_last data);
//   - any other input is gathered, or filled with its broadcast value;
//   - an instruction whose operands do not change from row to row (it reads
//     only scalars and inputs broadcast across rows: the sigmoid of a
//     squeeze-excitation gate) runs once a call over one row, not once a
//     row.
// The program a BatchNorm leaves when it cannot fold into a convolution
// (densenet's pre-activation BatchNorm+ReLU: mul, add, optional activation)
// runs as one pass over the block instead of one per instruction: it is
// bound by memory, and the passes over the temporaries cost more than its
// arithmetic (2-2.5x on rows in cache).
// The operations are the same vector operations in the same order either
// way (this file is compiled with -ffp-contract=off: no mul and add become
// one fused multiply-add), so where an instruction is evaluated changes no
// result.
#include "fx_core/compile/pointwise_loop.h"

#include <ATen/cpu/vec/vec.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace fx {
namespace {

using Vec = at::vec::Vectorized<float>;
constexpr int64_t kLanes = Vec::size();
// Elements per pass over the program: its temporaries stay in L1. The
// affine program has none, and longer passes pay there (rows of 96 floats
// at 4,096: 1.3x against 512, nearer a hand-written loop).
constexpr int64_t kBlock = 512;
constexpr int64_t kAffineBlock = 4096;
constexpr int64_t kMaxHoistedFloats = int64_t{1} << 18;  // 1 MB

// Row r of an operand's block values starts at ptr + r * step; the values
// along a row are adjacent.
struct Rows {
  const float* ptr = nullptr;
  int64_t step = 0;
};

// dst's rows = f(a, b, c) lane by lane over `rows` rows of n elements.
template <typename F>
inline void map(F f, Rows a, Rows b, Rows c, float* dst, int64_t dst_step,
                int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* pa = a.ptr + r * a.step;
    const float* pb = b.ptr + r * b.step;
    const float* pc = c.ptr + r * c.step;
    float* pd = dst + r * dst_step;
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      f(Vec::loadu(pa + i), Vec::loadu(pb + i), Vec::loadu(pc + i))
          .store(pd + i);
    }
    if (i < n) {
      const int64_t m = n - i;
      f(Vec::loadu(pa + i, m), Vec::loadu(pb + i, m), Vec::loadu(pc + i, m))
          .store(pd + i, m);
    }
  }
}

// dst's rows = activation(m0 * m1 + s) (s + m0 * m1 when !kProductFirst),
// the activation a ReLU or none, in one pass.
template <bool kProductFirst, bool kRelu>
void affine_rows(Rows m0, Rows m1, Rows s, float* dst, int64_t dst_step,
                 int64_t rows, int64_t n) {
  const Vec zero(0.0f);
  auto value = [&](Vec a, Vec b, Vec c) {
    const Vec product = a * b;
    const Vec sum = kProductFirst ? product + c : c + product;
    return kRelu ? at::vec::clamp_min(sum, zero) : sum;
  };
  map(value, m0, m1, s, dst, dst_step, rows, n);
}

// ATen's vectorized CPU formulas (UnaryOpsKernel.cpp, Activation.cpp,
// BinaryOpsKernel.cpp, TensorCompareKernel.cpp in torch 1.13).
void apply(PointwiseOp op, Rows a, Rows b, Rows c, float* dst, int64_t dst_step,
           int64_t rows, int64_t n) {
  const Vec zero(0.0f), one(1.0f), three(3.0f), six(6.0f);
  auto run = [&](auto f) { map(f, a, b, c, dst, dst_step, rows, n); };
  switch (op) {
    case PointwiseOp::kAdd:
      return run([](Vec x, Vec y, Vec) { return x + y; });
    case PointwiseOp::kSub:
      return run([](Vec x, Vec y, Vec) { return x - y; });
    case PointwiseOp::kMul:
      return run([](Vec x, Vec y, Vec) { return x * y; });
    case PointwiseOp::kDiv:
      return run([](Vec x, Vec y, Vec) { return x / y; });
    case PointwiseOp::kNeg:
      return run([](Vec x, Vec, Vec) { return x.neg(); });
    case PointwiseOp::kRelu:
      return run([&](Vec x, Vec, Vec) { return at::vec::clamp_min(x, zero); });
    case PointwiseOp::kSigmoid:
      return run([&](Vec x, Vec, Vec) {
        return ((zero - x).exp() + one).reciprocal();
      });
    case PointwiseOp::kTanh:
      return run([](Vec x, Vec, Vec) { return x.tanh(); });
    case PointwiseOp::kSilu:
      return run([&](Vec x, Vec, Vec) { return x / (one + x.neg().exp()); });
    case PointwiseOp::kHardswish:
      return run([&](Vec x, Vec, Vec) {
        return x * at::vec::minimum(at::vec::clamp_min(x + three, zero), six) /
               six;
      });
    case PointwiseOp::kHardsigmoid:
      return run([&](Vec x, Vec, Vec) {
        return at::vec::minimum(at::vec::clamp_min(x + three, zero), six) / six;
      });
    case PointwiseOp::kGelu:
      return run([&](Vec x, Vec, Vec) {
        return x * Vec(0.5f) *
               (one + (x * Vec(static_cast<float>(M_SQRT1_2))).erf());
      });
    case PointwiseOp::kClamp:
      return run(
          [](Vec x, Vec lo, Vec hi) { return at::vec::clamp(x, lo, hi); });
    case PointwiseOp::kClampMin:
      return run([](Vec x, Vec lo, Vec) { return at::vec::clamp_min(x, lo); });
    case PointwiseOp::kClampMax:
      return run([](Vec x, Vec hi, Vec) { return at::vec::clamp_max(x, hi); });
  }
}

// dst[0, n) = v, a vector at a time.
inline void fill(float* dst, int64_t n, float v) {
  const Vec splat(v);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) splat.store(dst + i);
  if (i < n) splat.store(dst + i, n - i);
}

// Scratch memory of one thread, reused from call to call (a call per
// iterator chunk; no allocation once it has grown).
std::vector<float>& scratch(size_t floats) {
  thread_local std::vector<float> memory;
  if (memory.size() < floats) memory.resize(floats);
  return memory;
}

class Evaluator {
 public:
  Evaluator(const PointwiseProgram& p, char** data, const int64_t* strides,
            int64_t size0, int64_t size1);
  void run();

 private:
  int64_t inner(size_t op) const { return strides_[op]; }
  int64_t outer(size_t op) const { return strides_[1 + p_.num_inputs + op]; }
  void classify();
  void block(int64_t row, int64_t rows, int64_t col, int64_t n);
  void instruction(size_t j, int64_t rows, int64_t col, int64_t n, float* dst,
                   int64_t dst_step);
  Rows input_rows(size_t k, int64_t row, int64_t rows, int64_t col, int64_t n);
  Rows operand(const PointwiseOperand& o, int64_t col, int64_t n) const;
  void store_output(int64_t row, int64_t rows, int64_t col, int64_t n);
  void match_affine();
  void affine(int64_t rows, int64_t col, int64_t n, float* dst,
              int64_t dst_step);

  const PointwiseProgram& p_;
  char** data_;
  const int64_t* strides_;
  int64_t size0_, size1_;
  int64_t block_ = kBlock;  // elements per pass (kAffineBlock when affine_)
  float* temps_;            // instruction j's block values at j * block_
  float* inputs_;           // input k's gathered or filled values at k * block_
  float* scalars_;          // scalar s repeated block_ times at s * block_
  float* out_;              // the block's results when the output is strided
  float* hoisted_;          // a row-invariant instruction's row at j * size0
  std::vector<Rows> in_;
  // Input k's scratch holds filled_value_[k] in its first filled_[k] floats.
  std::vector<int64_t> filled_;
  std::vector<float> filled_value_;
  std::vector<bool> input_invariant_, invariant_;
  // The program is mul, add of its product, and an optional activation of
  // the sum (match_affine): the add's other operand, whether the product is
  // its first, and whether the activation is a ReLU (fused into the pass).
  bool affine_ = false;
  PointwiseOperand shift_;
  bool product_first_ = false;
  bool relu_ = false;
};

Evaluator::Evaluator(const PointwiseProgram& p, char** data,
                     const int64_t* strides, int64_t size0, int64_t size1)
    : p_(p),
      data_(data),
      strides_(strides),
      size0_(size0),
      size1_(size1),
      in_(p.num_inputs),
      filled_(p.num_inputs, 0),
      filled_value_(p.num_inputs, 0.0f) {
  classify();
  match_affine();
  if (affine_) block_ = kAffineBlock;
  const size_t code = p.code.size(), nin = p.num_inputs;
  const size_t temps = affine_ ? 0 : code;  // the affine pass keeps none
  const size_t block_floats =
      (temps + nin + p.scalars.size() + 1) * static_cast<size_t>(block_);
  const size_t hoisted_floats =
      std::find(invariant_.begin(), invariant_.end(), true) == invariant_.end()
          ? 0
          : code * static_cast<size_t>(size0);
  float* m = scratch(block_floats + hoisted_floats).data();
  temps_ = m;
  inputs_ = temps_ + temps * block_;
  scalars_ = inputs_ + nin * block_;
  out_ = scalars_ + p.scalars.size() * block_;
  hoisted_ = out_ + block_;
  for (size_t s = 0; s < p.scalars.size(); ++s) {
    fill(scalars_ + s * block_, block_, static_cast<float>(p.scalars[s]));
  }
}

// Which inputs and instructions are the same in every row. The last
// instruction never is: it writes every row of the output.
void Evaluator::classify() {
  input_invariant_.assign(p_.num_inputs, false);
  invariant_.assign(p_.code.size(), false);
  // Hoisting pays from two rows on; its rows take code x size0 floats.
  if (size1_ < 2 || p_.code.size() * size0_ > kMaxHoistedFloats) return;
  for (size_t k = 0; k < p_.num_inputs; ++k) {
    input_invariant_[k] = outer(1 + k) == 0;
  }
  for (size_t j = 0; j + 1 < p_.code.size(); ++j) {
    const PointwiseInstr& ins = p_.code[j];
    bool same = true;
    for (int o = 0; o < ins.arity; ++o) {
      const PointwiseOperand& x = ins.operands[o];
      if (x.kind == PointwiseOperand::Kind::kInput) {
        same = same && input_invariant_[x.index];
      } else if (x.kind == PointwiseOperand::Kind::kTemp) {
        same = same && invariant_[x.index];
      }
    }
    invariant_[j] = same;
  }
}

void Evaluator::run() {
  // The row-invariant instructions, once over row 0.
  for (int64_t col = 0; col < size0_; col += block_) {
    const int64_t n = std::min(block_, size0_ - col);
    bool any = false;
    for (size_t j = 0; j < p_.code.size(); ++j) {
      if (!invariant_[j]) continue;
      if (!any) {
        for (size_t k = 0; k < p_.num_inputs; ++k) {
          if (input_invariant_[k]) in_[k] = input_rows(k, 0, 1, col, n);
        }
        any = true;
      }
      instruction(j, 1, col, n, hoisted_ + j * size0_ + col, 0);
    }
  }
  const int64_t rows = size0_ >= block_ ? 1 : block_ / size0_;
  for (int64_t row = 0; row < size1_; row += rows) {
    const int64_t r = std::min(rows, size1_ - row);
    for (int64_t col = 0; col < size0_; col += block_) {
      block(row, r, col, std::min(block_, size0_ - col));
    }
  }
}

void Evaluator::block(int64_t row, int64_t rows, int64_t col, int64_t n) {
  for (size_t k = 0; k < p_.num_inputs; ++k) {
    in_[k] = input_rows(k, row, rows, col, n);
  }
  const bool direct = inner(0) == sizeof(float);
  float* dst =
      direct
          ? reinterpret_cast<float*>(data_[0] + row * outer(0) + col * inner(0))
          : out_;
  const int64_t dst_step = direct ? outer(0) / int64_t{sizeof(float)} : n;
  if (affine_) {
    affine(rows, col, n, dst, dst_step);
  } else {
    const size_t last = p_.code.size() - 1;
    for (size_t j = 0; j < last; ++j) {
      if (!invariant_[j]) instruction(j, rows, col, n, temps_ + j * block_, n);
    }
    instruction(last, rows, col, n, dst, dst_step);
  }
  if (!direct) store_output(row, rows, col, n);
}

// Whether the program is x * a + b with an optional activation of the sum,
// no instruction hoisted.
void Evaluator::match_affine() {
  const std::vector<PointwiseInstr>& c = p_.code;
  if (c.size() < 2 || c.size() > 3 || c[0].op != PointwiseOp::kMul ||
      c[1].op != PointwiseOp::kAdd || invariant_[0]) {
    return;
  }
  auto is_temp = [](const PointwiseOperand& o, int32_t j) {
    return o.kind == PointwiseOperand::Kind::kTemp && o.index == j;
  };
  const PointwiseOperand* add = c[1].operands;
  if (is_temp(add[0], 0) == is_temp(add[1], 0)) return;
  if (c.size() == 3) {
    // The activation reads the sum first, scalars after (clamp's bounds).
    if (!is_temp(c[2].operands[0], 1)) return;
    for (int o = 1; o < c[2].arity; ++o) {
      if (c[2].operands[o].kind != PointwiseOperand::Kind::kScalar) return;
    }
    relu_ = c[2].op == PointwiseOp::kRelu;
  }
  product_first_ = is_temp(add[0], 0);
  shift_ = product_first_ ? add[1] : add[0];
  affine_ = true;
}

// The affine program over the block into dst: the product and sum in one
// pass (with a ReLU), any other activation a second pass over dst.
void Evaluator::affine(int64_t rows, int64_t col, int64_t n, float* dst,
                       int64_t dst_step) {
  const PointwiseInstr& mul = p_.code[0];
  const Rows m0 = operand(mul.operands[0], col, n);
  const Rows m1 = operand(mul.operands[1], col, n);
  const Rows s = operand(shift_, col, n);
  if (product_first_) {
    (relu_ ? affine_rows<true, true>
           : affine_rows<true, false>)(m0, m1, s, dst, dst_step, rows, n);
  } else {
    (relu_ ? affine_rows<false, true>
           : affine_rows<false, false>)(m0, m1, s, dst, dst_step, rows, n);
  }
  if (p_.code.size() < 3 || relu_) return;
  const PointwiseInstr& act = p_.code[2];
  Rows ops[3] = {{dst, dst_step}, {dst, dst_step}, {dst, dst_step}};
  for (int o = 1; o < act.arity; ++o) ops[o] = operand(act.operands[o], col, n);
  apply(act.op, ops[0], ops[1], ops[2], dst, dst_step, rows, n);
}

void Evaluator::instruction(size_t j, int64_t rows, int64_t col, int64_t n,
                            float* dst, int64_t dst_step) {
  const PointwiseInstr& ins = p_.code[j];
  Rows ops[3];
  for (int o = 0; o < ins.arity; ++o) ops[o] = operand(ins.operands[o], col, n);
  for (int o = ins.arity; o < 3; ++o) ops[o] = ops[0];  // unread
  apply(ins.op, ops[0], ops[1], ops[2], dst, dst_step, rows, n);
}

Rows Evaluator::operand(const PointwiseOperand& o, int64_t col,
                        int64_t n) const {
  switch (o.kind) {
    case PointwiseOperand::Kind::kInput:
      return in_[o.index];
    case PointwiseOperand::Kind::kTemp:
      if (invariant_[o.index]) return {hoisted_ + o.index * size0_ + col, 0};
      return {temps_ + o.index * block_, n};
    case PointwiseOperand::Kind::kScalar:
      return {scalars_ + o.index * block_, 0};
  }
  return {};
}

// Input k's values for rows [row, row + rows), columns [col, col + n).
Rows Evaluator::input_rows(size_t k, int64_t row, int64_t rows, int64_t col,
                           int64_t n) {
  const int64_t in = inner(1 + k), out = outer(1 + k);
  const char* base = data_[1 + k] + row * out + col * in;
  if (in == sizeof(float)) {
    return {reinterpret_cast<const float*>(base), out / int64_t{sizeof(float)}};
  }
  float* g = inputs_ + k * block_;
  if (in == 0 && (out == 0 || rows == 1)) {
    // One value for the whole block: filled once while it stays the same
    // (a long row's blocks, a broadcast scalar tensor).
    const float v = *reinterpret_cast<const float*>(base);
    if (filled_[k] < n || std::memcmp(&filled_value_[k], &v, sizeof v) != 0) {
      fill(g, block_, v);
      filled_[k] = block_;
      filled_value_[k] = v;
    }
    return {g, 0};
  }
  filled_[k] = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const char* src = base + r * out;
    float* dst = g + r * n;
    if (in == 0) {
      fill(dst, n, *reinterpret_cast<const float*>(src));
      continue;
    }
    for (int64_t i = 0; i < n; ++i) {
      dst[i] = *reinterpret_cast<const float*>(src + i * in);
    }
  }
  return {g, n};
}

// The block's results (in out_) to the strided output.
void Evaluator::store_output(int64_t row, int64_t rows, int64_t col,
                             int64_t n) {
  const int64_t in = inner(0), out = outer(0);
  for (int64_t r = 0; r < rows; ++r) {
    char* dst = data_[0] + (row + r) * out + col * in;
    const float* src = out_ + r * n;
    for (int64_t i = 0; i < n; ++i) {
      *reinterpret_cast<float*>(dst + i * in) = src[i];
    }
  }
}

}  // namespace

bool pointwise_loop_supported() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

void pointwise_loop(const PointwiseProgram& program, char** data,
                    const int64_t* strides, int64_t size0, int64_t size1) {
  if (size0 <= 0 || size1 <= 0) return;
  Evaluator(program, data, strides, size0, size1).run();
}

}  // namespace fx
