// The row loops behind fx::max_pool2d_channels_last (max_pool_kernel.h):
// the window geometry, ATen's rule for one channel, and the vector loops
// (SSE2 in max_pool_kernel.cc, AVX2 in max_pool_rows_avx2.cc, compiled for
// AVX2 and called only when the CPU has it). Private to the kernel.
#ifndef FX_CORE_COMPILE_MAX_POOL_ROWS_H_
#define FX_CORE_COMPILE_MAX_POOL_ROWS_H_

#include <cstdint>
#include <limits>

namespace fx {
namespace max_pool {

// One image's sizes (channels_last) and the window.
struct Geometry {
  int64_t c, h, w, oh, ow;
  int64_t kh, kw, sh, sw, dh, dw, ph, pw;
};

// The helpers below have internal linkage: the two row loops' files are
// compiled for different instruction sets, and one shared inline copy
// (the linker keeps either) could run AVX2 code on a CPU without it.
namespace {

// ATen's rule: v replaces the maximum m when greater or NaN.
inline float take(float m, float v) { return (v > m || v != v) ? v : m; }

// out[c] for c in [from, to), one channel at a time.
inline void pool_channels(const float* in, const int64_t* offsets, int n,
                          float* out, int64_t from, int64_t to) {
  for (int64_t c = from; c < to; ++c) {
    float m = -std::numeric_limits<float>::infinity();
    for (int k = 0; k < n; ++k) m = take(m, in[offsets[k] + c]);
    out[c] = m;
  }
}

// The window's offsets (in floats) inside an image at (oh, ow), clipped to
// the input; returns how many (at most kh * kw).
inline int window_offsets(const Geometry& g, int64_t oh, int64_t ow,
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

}  // namespace

// Output rows [begin, end) of `out` (row r: image r / oh, output row
// r % oh) from `in`; `offsets` holds kh * kw entries.
using RowsFn = void (*)(const Geometry& g, const float* in, float* out,
                        int64_t begin, int64_t end, int64_t* offsets);
void rows_sse2(const Geometry& g, const float* in, float* out, int64_t begin,
               int64_t end, int64_t* offsets);
void rows_avx2(const Geometry& g, const float* in, float* out, int64_t begin,
               int64_t end, int64_t* offsets);

namespace {

// A row loop over `pool_one(image, out_pixel, oh, ow, window_size)`, the
// window's offsets in `offsets`.
template <typename PoolOne>
inline void for_each_pixel(const Geometry& g, const float* in, float* out,
                           int64_t begin, int64_t end, int64_t* offsets,
                           PoolOne pool_one) {
  for (int64_t r = begin; r < end; ++r) {
    const int64_t n = r / g.oh, oh = r % g.oh;
    const float* image = in + n * g.h * g.w * g.c;
    for (int64_t ow = 0; ow < g.ow; ++ow) {
      pool_one(image, out + ((n * g.oh + oh) * g.ow + ow) * g.c, oh, ow,
               window_offsets(g, oh, ow, offsets));
    }
  }
}

}  // namespace
}  // namespace max_pool
}  // namespace fx

#endif  // FX_CORE_COMPILE_MAX_POOL_ROWS_H_
