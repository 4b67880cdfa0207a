// panel_gemm.h's product in AVX-512F: register tiles of up to 8 rows x one
// panel (3 vectors, 24 accumulators), the panel's rows read from L2 and
// a's values broadcast.
#include <immintrin.h>

#include "fx_core/compile/panel_gemm.h"

namespace fx {
namespace {

// The helpers here have internal linkage and std::min / std::max are not
// used: an inline function's copy compiled for AVX-512 in this file could be
// the one the linker keeps for the whole program (max_pool_rows.h).
int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }
int64_t larger(int64_t a, int64_t b) { return a > b ? a : b; }

constexpr int kTileRows = 8;
constexpr int kVectors = 3;  // kPanelWidth / 16
// A block of the product: at most this many rows of a (256 x 512 floats:
// 512 KiB, which the L2 cache keeps while every panel passes) and
// kPanelBlockDepth.
constexpr int64_t kBlockRows = 256;
constexpr int64_t kLine = 64;

// Issues `lines` prefetches of the cache lines from `next`, spread evenly
// over `steps` calls of step().
class Prefetcher {
 public:
  Prefetcher(const char* next, int64_t lines, int64_t steps)
      : next_(next),
        end_(next + lines * kLine),
        lines_(lines),
        steps_(larger(steps, 1)) {}
  void step() {
    credit_ += lines_;
    while (credit_ >= steps_) {
      _mm_prefetch(next_, _MM_HINT_T1);
      next_ += kLine;
      credit_ -= steps_;
    }
  }
  // Issues what step() has not (fewer steps were taken than planned).
  void finish() {
    for (; next_ < end_; next_ += kLine) _mm_prefetch(next_, _MM_HINT_T1);
  }

 private:
  const char* next_;
  const char* end_;
  int64_t lines_, steps_, credit_ = 0;
};

// One register tile: rows [0, R) of a block, one panel, depth rows of k.
struct Tile {
  const float* a;
  int64_t lda;
  const float* b;  // the panel's rows for this depth
  int64_t depth;
  float* c;
  int64_t ldc;
  const float* bias;  // the panel's, or null
  const float* residual;
  int64_t ldr;
  bool first, last, relu;
  __mmask16 mask[kVectors];  // the columns of c inside n
};

// The first depth block starts from the bias, the others from the partial
// sums in c.
template <int R>
void start(const Tile& t, __m512 (&acc)[R][kVectors]) {
  for (int v = 0; v < kVectors; ++v) {
    if (t.first) {
      const __m512 b =
          t.bias ? _mm512_loadu_ps(t.bias + 16 * v) : _mm512_setzero_ps();
      for (int i = 0; i < R; ++i) acc[i][v] = b;
    } else {
      for (int i = 0; i < R; ++i) {
        acc[i][v] = _mm512_maskz_loadu_ps(t.mask[v], t.c + i * t.ldc + 16 * v);
      }
    }
  }
}

// The last depth block adds the residual and applies the ReLU.
template <int R>
void store_tile(const Tile& t, __m512 (&acc)[R][kVectors]) {
  for (int i = 0; i < R; ++i) {
    for (int v = 0; v < kVectors; ++v) {
      __m512 x = acc[i][v];
      if (t.last && t.residual) {
        x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(
                                 t.mask[v], t.residual + i * t.ldr + 16 * v));
      }
      if (t.last && t.relu) x = _mm512_max_ps(x, _mm512_setzero_ps());
      _mm512_mask_storeu_ps(t.c + i * t.ldc + 16 * v, t.mask[v], x);
    }
  }
}

// acc += a[:, k] * b[k, :] for one k.
template <int R>
inline void multiply_row(const Tile& t, int64_t k, __m512 (&acc)[R][kVectors]) {
  const float* row = t.b + k * kPanelWidth;
  const __m512 b0 = _mm512_loadu_ps(row);
  const __m512 b1 = _mm512_loadu_ps(row + 16);
  const __m512 b2 = _mm512_loadu_ps(row + 32);
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    const __m512 x = _mm512_set1_ps(t.a[i * t.lda + k]);
    acc[i][0] = _mm512_fmadd_ps(x, b0, acc[i][0]);
    acc[i][1] = _mm512_fmadd_ps(x, b1, acc[i][1]);
    acc[i][2] = _mm512_fmadd_ps(x, b2, acc[i][2]);
  }
}

// The rows of k in groups of kUnroll, one prefetcher step per group.
constexpr int64_t kUnroll = 4;

template <int R>
void run_tile(const Tile& t, Prefetcher& prefetch) {
  __m512 acc[R][kVectors];
  start<R>(t, acc);
  const int64_t whole = t.depth - t.depth % kUnroll;
  for (int64_t k = 0; k < whole; k += kUnroll) {
    prefetch.step();
#pragma GCC unroll 4
    for (int64_t u = 0; u < kUnroll; ++u) multiply_row<R>(t, k + u, acc);
  }
  for (int64_t k = whole; k < t.depth; ++k) multiply_row<R>(t, k, acc);
  prefetch.finish();
  store_tile<R>(t, acc);
}

void run_tile_of(int rows, const Tile& t, Prefetcher& prefetch) {
  switch (rows) {
    case 1:
      return run_tile<1>(t, prefetch);
    case 2:
      return run_tile<2>(t, prefetch);
    case 3:
      return run_tile<3>(t, prefetch);
    case 4:
      return run_tile<4>(t, prefetch);
    case 5:
      return run_tile<5>(t, prefetch);
    case 6:
      return run_tile<6>(t, prefetch);
    case 7:
      return run_tile<7>(t, prefetch);
    default:
      return run_tile<8>(t, prefetch);
  }
}

// The depth rows [begin, end) of block `index` of `count` over k.
struct Span {
  int64_t begin, end;
};
Span depth_block(int64_t k, int64_t count, int64_t index) {
  return {index * k / count, (index + 1) * k / count};
}

__mmask16 columns_mask(int64_t columns) {
  if (columns >= 16) return 0xFFFF;
  if (columns <= 0) return 0;
  return static_cast<__mmask16>((1u << columns) - 1);
}

// Rows [row0, row0 + rows) x panel p x depth `d`, prefetching `next_lines`
// lines from `next` on the way. The tiles split the rows evenly (at most
// kTileRows each), so that no tile is left with a row or two.
void run_block(const PanelGemm& g, int64_t row0, int64_t rows, int64_t p,
               Span d, bool first, bool last, const char* next,
               int64_t next_lines) {
  const int64_t tiles = (rows + kTileRows - 1) / kTileRows;
  const int64_t base = rows / tiles, extra = rows % tiles;
  const int64_t col0 = p * kPanelWidth;
  Tile t;
  t.lda = g.lda;
  t.b = g.panels + p * g.k * kPanelWidth + d.begin * kPanelWidth;
  t.depth = d.end - d.begin;
  t.ldc = g.ldc;
  t.bias = g.bias ? g.bias + col0 : nullptr;
  t.ldr = g.ldr;
  t.first = first;
  t.last = last;
  t.relu = g.relu;
  for (int v = 0; v < kVectors; ++v) {
    t.mask[v] = columns_mask(g.n - col0 - 16 * v);
  }
  const int64_t per_tile = (next_lines + tiles - 1) / tiles;
  int64_t row = row0;
  for (int64_t i = 0; i < tiles; ++i) {
    const int64_t r = base + (i < extra ? 1 : 0);
    const int64_t issued = smaller(next_lines, i * per_tile);
    Prefetcher prefetch(next + issued * kLine,
                        smaller(per_tile, next_lines - issued),
                        t.depth / kUnroll);
    t.a = g.a + row * g.lda + d.begin;
    t.c = g.c + row * g.ldc + col0;
    t.residual = g.residual ? g.residual + row * g.ldr + col0 : nullptr;
    run_tile_of(static_cast<int>(r), t, prefetch);
    row += r;
  }
}

}  // namespace

bool panel_gemm_supported() { return __builtin_cpu_supports("avx512f"); }

void panel_gemm(const PanelGemm& g, int64_t first, int64_t last) {
  const int64_t depth_blocks = (g.k + kPanelBlockDepth - 1) / kPanelBlockDepth;
  const char* panels = reinterpret_cast<const char*>(g.panels);
  const int64_t panel_bytes = g.k * kPanelWidth * 4;
  for (int64_t row0 = 0; row0 < g.m; row0 += kBlockRows) {
    const int64_t rows = smaller(kBlockRows, g.m - row0);
    for (int64_t p = first; p < last; ++p) {
      for (int64_t b = 0; b < depth_blocks; ++b) {
        const Span d = depth_block(g.k, depth_blocks, b);
        // The block computed next follows this one in memory; after the
        // last panel, the next row block starts again at `first`.
        const char* next = panels + p * panel_bytes + d.end * kPanelWidth * 4;
        int64_t next_depth = 0;
        if (b + 1 < depth_blocks) {
          const Span following = depth_block(g.k, depth_blocks, b + 1);
          next_depth = following.end - following.begin;
        } else if (p + 1 < last) {
          next_depth = depth_block(g.k, depth_blocks, 0).end;
        } else if (row0 + rows < g.m) {
          next = panels + first * panel_bytes;
          next_depth = depth_block(g.k, depth_blocks, 0).end;
        }
        const int64_t lines = next_depth * kPanelWidth * 4 / kLine;
        run_block(g, row0, rows, p, d, b == 0, b + 1 == depth_blocks, next,
                  lines);
      }
    }
  }
}

}  // namespace fx
