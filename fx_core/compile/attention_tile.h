// The fused core of windowed attention (window_attention.h) for one head of
// one window: out = softmax(scale * q @ k^T + bias [+ mask]) @ v, with the
// n x n scores kept in a small scratch buffer (L1-sized for Swin's 49
// tokens) instead of memory, and the bias, mask, softmax and both products
// in one pass. attention_tile.cc is compiled for AVX2 + FMA (ATen's AVX2
// Vectorized<float> and its Sleef exp), so call it only when
// attention_tile_supported() says the CPU has them.
//
// q, k and v are [n, head_dim] with rows `qkv_stride` floats apart (where a
// qkv linear's result holds them); bias and mask are [n, n] row-major (mask
// may be null); out is [n, head_dim] with rows `out_stride` floats apart.
// Results equal the unfused ATen ops within float32 rounding (the scale is
// applied to k, the sums are in another order, and a probability whose exp
// is below exp(-80), such as a masked score's, is 0 instead of a subnormal
// float: it would change a row's sum, at least 1, by less than 1e-34).
#ifndef FX_CORE_COMPILE_ATTENTION_TILE_H_
#define FX_CORE_COMPILE_ATTENTION_TILE_H_

#include <cstdint>

namespace fx {

struct AttentionTile {
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  int64_t qkv_stride = 0;
  const float* bias = nullptr;
  const float* mask = nullptr;  // null: no mask
  float* out = nullptr;
  int64_t out_stride = 0;
};

bool attention_tile_supported();

// The scratch floats attention_tile needs for n tokens of head_dim.
int64_t attention_tile_scratch(int64_t n, int64_t head_dim);

void attention_tile(const AttentionTile& tile, int64_t n, int64_t head_dim,
                    float scale, float* scratch);

}  // namespace fx

#endif  // FX_CORE_COMPILE_ATTENTION_TILE_H_
