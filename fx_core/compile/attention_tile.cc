// Compiled with -mavx2 -mfma and CPU_CAPABILITY=AVX2 (BUILD): Vectorized<float>
// is ATen's AVX2 class here. This file includes nothing from ATen but the
// vector headers, so no other ATen code is compiled for AVX2 through it.
#include "fx_core/compile/attention_tile.h"

#include <ATen/cpu/vec/vec.h>

#include <cstring>
#include <limits>

namespace fx {
namespace {

using Vec = at::vec::Vectorized<float>;
constexpr int64_t kLanes = Vec::size();

int64_t round_up(int64_t n) { return (n + kLanes - 1) / kLanes * kLanes; }

// Plain loops, not <algorithm>: a template instantiated here would be
// AVX2 code the linker might pick for callers on other CPUs.
void fill(float* begin, float* end, float value) {
  for (float* p = begin; p < end; ++p) *p = value;
}

float max_of(const Vec& v) {
  float lanes[kLanes];
  v.store(lanes);
  float max = lanes[0];
  for (float x : lanes) max = x > max ? x : max;
  return max;
}

float sum_of(const Vec& v) {
  float lanes[kLanes];
  v.store(lanes);
  float sum = 0.0f;
  for (float x : lanes) sum += x;
  return sum;
}

// c[R, CV * kLanes] = a[R, depth] @ b[depth, CV * kLanes], rows of a, b and
// c lda, ldb, ldc floats apart: R x CV accumulators in registers.
template <int R, int CV>
void product_block(const float* a, int64_t lda, const float* b, int64_t ldb,
                   int64_t depth, float* c, int64_t ldc) {
  Vec acc[R][CV];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < CV; ++v) acc[r][v] = Vec(0.0f);
  }
  for (int64_t d = 0; d < depth; ++d) {
    Vec bv[CV];
    for (int v = 0; v < CV; ++v) bv[v] = Vec::loadu(b + d * ldb + v * kLanes);
    for (int r = 0; r < R; ++r) {
      const Vec av(a[r * lda + d]);
      for (int v = 0; v < CV; ++v) {
        acc[r][v] = at::vec::fmadd(av, bv[v], acc[r][v]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < CV; ++v) acc[r][v].store(c + r * ldc + v * kLanes);
  }
}

template <int R>
void product_row_block(const float* a, int64_t lda, const float* b, int64_t ldb,
                       int64_t depth, float* c, int64_t ldc, int64_t vectors) {
  int64_t v = 0;
  for (; v + 3 <= vectors; v += 3) {
    product_block<R, 3>(a, lda, b + v * kLanes, ldb, depth, c + v * kLanes,
                        ldc);
  }
  if (vectors - v == 2) {
    product_block<R, 2>(a, lda, b + v * kLanes, ldb, depth, c + v * kLanes,
                        ldc);
  } else if (vectors - v == 1) {
    product_block<R, 1>(a, lda, b + v * kLanes, ldb, depth, c + v * kLanes,
                        ldc);
  }
}

// c[rows, vectors * kLanes] = a[rows, depth] @ b[depth, vectors * kLanes].
void product(const float* a, int64_t lda, const float* b, int64_t ldb,
             int64_t depth, float* c, int64_t ldc, int64_t rows,
             int64_t vectors) {
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    product_row_block<4>(a + r * lda, lda, b, ldb, depth, c + r * ldc, ldc,
                         vectors);
  }
  const float* ar = a + r * lda;
  float* cr = c + r * ldc;
  switch (rows - r) {
    case 3:
      product_row_block<3>(ar, lda, b, ldb, depth, cr, ldc, vectors);
      break;
    case 2:
      product_row_block<2>(ar, lda, b, ldb, depth, cr, ldc, vectors);
      break;
    case 1:
      product_row_block<1>(ar, lda, b, ldb, depth, cr, ldc, vectors);
      break;
    default:
      break;
  }
}

// row[0, n) += add[0, n); row[n, width) = -inf.
void add_row(float* row, const float* add, int64_t n, int64_t width) {
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    (Vec::loadu(row + j) + Vec::loadu(add + j)).store(row + j);
  }
  if (j < n) {
    (Vec::loadu(row + j, n - j) + Vec::loadu(add + j, n - j))
        .store(row + j, n - j);
  }
  fill(row + n, row + width, -std::numeric_limits<float>::infinity());
}

// Below this, exp(x) / n is under float's normal range (FLT_MIN is
// exp(-87.3)) for rows of up to e^7 (about 1,100) tokens.
constexpr float kExpFloor = -80.0f;

// exp(x), or 0 where x < kExpFloor. Swin's shifted windows mask scores with
// -100, and the exps of those are subnormal floats: on Intel CPUs every
// instruction that makes or reads one takes a microcode assist, so the
// masked windows ran 4-5x slower than the others. A value under exp(-80)
// changes a sum of at least 1 (the row's max term) by less than 1e-34,
// far below float32 rounding, so the result is the reference's within it.
Vec exp_or_zero(const Vec& x) {
  const Vec floor(kExpFloor);
  return Vec::blendv(at::vec::maximum(x, floor).exp(), Vec(0.0f), x < floor);
}

// row[0, width) = softmax(row[0, width)); the -inf padding becomes 0.
void softmax_row(float* row, int64_t width) {
  Vec max_v(-std::numeric_limits<float>::infinity());
  for (int64_t j = 0; j < width; j += kLanes) {
    max_v = at::vec::maximum(max_v, Vec::loadu(row + j));
  }
  const Vec shift(max_of(max_v));
  Vec sum_v(0.0f);
  for (int64_t j = 0; j < width; j += kLanes) {
    const Vec e = exp_or_zero(Vec::loadu(row + j) - shift);
    e.store(row + j);
    sum_v = sum_v + e;
  }
  const Vec inverse(1.0f / sum_of(sum_v));
  for (int64_t j = 0; j < width; j += kLanes) {
    (Vec::loadu(row + j) * inverse).store(row + j);
  }
}

}  // namespace

bool attention_tile_supported() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

int64_t attention_tile_scratch(int64_t n, int64_t head_dim) {
  const int64_t width = round_up(n), padded_dim = round_up(head_dim);
  // k^T [head_dim, width], scores [n, width], v and out [n, padded_dim].
  return head_dim * width + n * width + 2 * n * padded_dim;
}

void attention_tile(const AttentionTile& t, int64_t n, int64_t head_dim,
                    float scale, float* scratch) {
  const int64_t width = round_up(n), padded_dim = round_up(head_dim);
  float* k_t = scratch;
  float* scores = k_t + head_dim * width;
  float* v = scores + n * width;
  float* out = v + n * padded_dim;
  // scale * k^T, zero in the padding columns.
  for (int64_t d = 0; d < head_dim; ++d) {
    float* row = k_t + d * width;
    for (int64_t j = 0; j < n; ++j) row[j] = t.k[j * t.qkv_stride + d] * scale;
    fill(row + n, row + width, 0.0f);
  }
  product(t.q, t.qkv_stride, k_t, width, head_dim, scores, width, n,
          width / kLanes);
  for (int64_t i = 0; i < n; ++i) {
    float* row = scores + i * width;
    add_row(row, t.bias + i * n, n, width);
    if (t.mask != nullptr) add_row(row, t.mask + i * n, n, width);
    softmax_row(row, width);
  }
  // v padded to whole vectors, then probs @ v.
  for (int64_t j = 0; j < n; ++j) {
    std::memcpy(v + j * padded_dim, t.v + j * t.qkv_stride,
                head_dim * sizeof(float));
    fill(v + j * padded_dim + head_dim, v + (j + 1) * padded_dim, 0.0f);
  }
  product(scores, width, v, padded_dim, n, out, padded_dim, n,
          padded_dim / kLanes);
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(t.out + i * t.out_stride, out + i * padded_dim,
                head_dim * sizeof(float));
  }
}

}  // namespace fx
