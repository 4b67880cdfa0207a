#include "fx_core/compile/max_pool_kernel.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace fx {
namespace {

struct Geometry {
  int64_t c, h, w, oh, ow;
  int64_t kh, kw, sh, sw, dh, dw, ph, pw;
};

// ATen's rule: v replaces the maximum m when greater or NaN.
inline float take(float m, float v) { return (v > m || v != v) ? v : m; }

#if defined(__SSE2__)
// The same rule on four lanes, in three instructions: the maximum (maxps
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

constexpr int64_t kBlock = 16;  // channels kept in registers at a time

// out[c] for c in [from, to), one channel at a time.
void pool_channels(const float* in, const int64_t* offsets, int n, float* out,
                   int64_t from, int64_t to) {
  for (int64_t c = from; c < to; ++c) {
    float m = -std::numeric_limits<float>::infinity();
    for (int k = 0; k < n; ++k) m = take(m, in[offsets[k] + c]);
    out[c] = m;
  }
}

// The window's offsets (in floats) inside image `in` at (oh, ow), clipped to
// the input; returns how many.
int window_offsets(const Geometry& g, int64_t oh, int64_t ow,
                   int64_t* offsets) {
  int n = 0;
  for (int64_t i = 0; i < g.kh; ++i) {
    const int64_t ih = oh * g.sh - g.ph + i * g.dh;
    if (ih < 0 || ih >= g.h) continue;
    for (int64_t j = 0; j < g.kw; ++j) {
      const int64_t iw = ow * g.sw - g.pw + j * g.dw;
      if (iw >= 0 && iw < g.w) offsets[n++] = (ih * g.w + iw) * g.c;
    }
  }
  return n;
}

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

// out[0, c) = max over the window at (oh, ow) of image `in`, ATen's way.
void pool_one(const Geometry& g, const float* in, float* out, int64_t oh,
              int64_t ow, int64_t* offsets) {
  const int n = window_offsets(g, oh, ow, offsets);
  int64_t c0 = 0;
  for (; c0 + kBlock <= g.c; c0 += kBlock) pool_block(in, offsets, n, out, c0);
  pool_channels(in, offsets, n, out, c0, g.c);
}

}  // namespace

void max_pool2d_channels_last(const PoolingWindow& window,
                              const at::Tensor& input, const at::Tensor& out) {
  const Geometry g{input.size(1),      input.size(2),      input.size(3),
                   out.size(2),        out.size(3),        window.kernel[0],
                   window.kernel[1],   window.stride[0],   window.stride[1],
                   window.dilation[0], window.dilation[1], window.pad_begin[0],
                   window.pad_begin[1]};
  const float* in = input.data_ptr<float>();
  float* o = out.data_ptr<float>();
  const int64_t rows = input.size(0) * g.oh;
  at::parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> offsets(g.kh * g.kw);
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = r / g.oh, oh = r % g.oh;
      const float* image = in + n * g.h * g.w * g.c;
      for (int64_t ow = 0; ow < g.ow; ++ow) {
        pool_one(g, image, o + ((n * g.oh + oh) * g.ow + ow) * g.c, oh, ow,
                 offsets.data());
      }
    }
  });
}

}  // namespace fx
