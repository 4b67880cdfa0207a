// Compiled with -mavx2 (fx_core/compile/BUILD.bazel); max_pool_kernel.cc
// calls it only on CPUs with AVX2. Eight channels a lane, thirty-two in
// registers at a time, then eight, then one.
#include <immintrin.h>

#include "fx_core/compile/max_pool_rows.h"

namespace fx {
namespace max_pool {
namespace {

// ATen's rule on eight lanes: the maximum (maxps keeps its second operand,
// m, on equal values and when either is NaN) and, apart, whether a NaN
// came by; the window then ends as NaN (all bits set) where one did.
inline __m256 take8(__m256 m, __m256 v, __m256* nan) {
  *nan = _mm256_or_ps(*nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  return _mm256_max_ps(v, m);
}

template <int kVectors>
inline void pool_vectors(const float* in, const int64_t* offsets, int n,
                         float* out, int64_t c0) {
  const __m256 low = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  __m256 m[kVectors], nan[kVectors];
  for (int v = 0; v < kVectors; ++v) {
    m[v] = low;
    nan[v] = _mm256_setzero_ps();
  }
  for (int k = 0; k < n; ++k) {
    const float* p = in + offsets[k] + c0;
    for (int v = 0; v < kVectors; ++v) {
      m[v] = take8(m[v], _mm256_loadu_ps(p + 8 * v), &nan[v]);
    }
  }
  for (int v = 0; v < kVectors; ++v) {
    _mm256_storeu_ps(out + c0 + 8 * v, _mm256_or_ps(m[v], nan[v]));
  }
}

}  // namespace

void rows_avx2(const Geometry& g, const float* in, float* out, int64_t begin,
               int64_t end, int64_t* offsets) {
  for_each_pixel(
      g, in, out, begin, end, offsets,
      [&](const float* image, float* pixel, int64_t, int64_t, int n) {
        int64_t c0 = 0;
        for (; c0 + 32 <= g.c; c0 += 32) {
          pool_vectors<4>(image, offsets, n, pixel, c0);
        }
        for (; c0 + 8 <= g.c; c0 += 8) {
          pool_vectors<1>(image, offsets, n, pixel, c0);
        }
        pool_channels(image, offsets, n, pixel, c0, g.c);
      });
}

}  // namespace max_pool
}  // namespace fx
