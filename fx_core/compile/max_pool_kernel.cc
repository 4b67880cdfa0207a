#include "fx_core/compile/max_pool_kernel.h"

#include <vector>

#include "fx_core/compile/max_pool_rows.h"
#include "fx_core/compile/parallel_for.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace fx {
namespace max_pool {
namespace {

constexpr int64_t kBlock = 16;  // channels kept in registers at a time

#if defined(__SSE2__)
// ATen's rule on four lanes, in three instructions: the maximum (maxps
// keeps its second operand, m, on equal values such as -0 and +0, and when
// either is NaN) and, apart, whether a NaN came by; the block then ends as
// NaN where one did (under ATen's rule any NaN met wins, the last one; here
// a NaN with all bits set).
inline __m128 take4(__m128 m, __m128 v, __m128* nan) {
  *nan = _mm_or_ps(*nan, _mm_cmpunord_ps(v, v));
  return _mm_max_ps(v, m);
}
inline __m128 finish4(__m128 m, __m128 nan) {
  return _mm_or_ps(m, nan);  // NaN's bits where a NaN came by
}
#endif

// out[c0, c0 + kBlock) = the maximum over the `n` window elements at
// `offsets` of `in` (whole blocks only).
void pool_block(const float* in, const int64_t* offsets, int n, float* out,
                int64_t c0) {
#if defined(__SSE2__)
  const __m128 low = _mm_set1_ps(-std::numeric_limits<float>::infinity());
  __m128 a0 = low, a1 = low, a2 = low, a3 = low;
  __m128 n0 = _mm_setzero_ps(), n1 = n0, n2 = n0, n3 = n0;
  for (int k = 0; k < n; ++k) {
    const float* p = in + offsets[k] + c0;
    a0 = take4(a0, _mm_loadu_ps(p), &n0);
    a1 = take4(a1, _mm_loadu_ps(p + 4), &n1);
    a2 = take4(a2, _mm_loadu_ps(p + 8), &n2);
    a3 = take4(a3, _mm_loadu_ps(p + 12), &n3);
  }
  _mm_storeu_ps(out + c0, finish4(a0, n0));
  _mm_storeu_ps(out + c0 + 4, finish4(a1, n1));
  _mm_storeu_ps(out + c0 + 8, finish4(a2, n2));
  _mm_storeu_ps(out + c0 + 12, finish4(a3, n3));
#else
  pool_channels(in, offsets, n, out, c0, c0 + kBlock);
#endif
}

RowsFn rows_for_this_cpu() {
  return __builtin_cpu_supports("avx2") ? rows_avx2 : rows_sse2;
}

}  // namespace

void rows_sse2(const Geometry& g, const float* in, float* out, int64_t begin,
               int64_t end, int64_t* offsets) {
  for_each_pixel(
      g, in, out, begin, end, offsets,
      [&](const float* image, float* pixel, int64_t, int64_t, int n) {
        int64_t c0 = 0;
        for (; c0 + kBlock <= g.c; c0 += kBlock) {
          pool_block(image, offsets, n, pixel, c0);
        }
        pool_channels(image, offsets, n, pixel, c0, g.c);
      });
}

}  // namespace max_pool

void max_pool2d_channels_last(const PoolingWindow& window,
                              const at::Tensor& input, const at::Tensor& out) {
  static const max_pool::RowsFn rows = max_pool::rows_for_this_cpu();
  const max_pool::Geometry g{
      input.size(1),      input.size(2),      input.size(3),
      out.size(2),        out.size(3),        window.kernel[0],
      window.kernel[1],   window.stride[0],   window.stride[1],
      window.dilation[0], window.dilation[1], window.pad_begin[0],
      window.pad_begin[1]};
  const float* in = input.data_ptr<float>();
  float* o = out.data_ptr<float>();
  at::parallel_for(0, input.size(0) * g.oh, 1, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> offsets(g.kh * g.kw);
    rows(g, in, o, begin, end, offsets.data());
  });
}

}  // namespace fx
