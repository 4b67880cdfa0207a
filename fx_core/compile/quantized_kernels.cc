#include "fx_core/compile/quantized_kernels.h"

#include <ATen/Version.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "fx_core/compile/parallel_for.h"

namespace fx {
namespace {

bool has_avx2_fma() {
  static const bool yes =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}

// LibTorch's quantize_val for quint8 on x86 (see the header).
uint8_t quantize_one(float x, float inv, float zero_point) {
  const float r = std::nearbyint(x * inv);
  if (!(r < 0x1p63f)) return 0;
  const float q = r + zero_point;  // exact below 2^24, clamped above it
  return q <= 0.0f ? 0 : q >= 255.0f ? 255 : static_cast<uint8_t>(q);
}

// Stores 8 int32 values of 0..255 as bytes.
__attribute__((target("avx2"))) inline void store_eight(__m256i ints,
                                                        uint8_t* out) {
  const __m128i words = _mm_packus_epi32(_mm256_castsi256_si128(ints),
                                         _mm256_extracti128_si256(ints, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out),
                   _mm_packus_epi16(words, words));
}

// quantize_one on 8 floats at a time (the same IEEE products, the same
// round-to-nearest-even), the last few one by one.
__attribute__((target("avx2"))) void quantize_avx2(const float* x, uint8_t* q,
                                                   int64_t n, float inv,
                                                   float zero_point) {
  const __m256 scale = _mm256_set1_ps(inv), zp = _mm256_set1_ps(zero_point);
  const __m256 lo = _mm256_setzero_ps(), hi = _mm256_set1_ps(255.0f);
  const __m256 limit = _mm256_set1_ps(0x1p63f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 r =
        _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), scale),
                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256 in_range = _mm256_cmp_ps(r, limit, _CMP_LT_OQ);
    const __m256 v = _mm256_and_ps(
        _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(r, zp), lo), hi), in_range);
    store_eight(_mm256_cvtps_epi32(v), q + i);
  }
  for (; i < n; ++i) q[i] = quantize_one(x[i], inv, zero_point);
}

// qadd's constants, as LibTorch derives them: scales in float, the output's
// reciprocal in float, and -s * zp premultiplied in float for the
// vectorised dequantize.
struct AddConstants {
  float a_scale, b_scale, a_premul, b_premul, inv, zero_point;
  float a_zero_point, b_zero_point;
  bool relu;
  explicit AddConstants(const QuantizedAddParams& p)
      : a_scale(static_cast<float>(p.a_scale)),
        b_scale(static_cast<float>(p.b_scale)),
        a_premul(a_scale * -static_cast<float>(p.a_zero_point)),
        b_premul(b_scale * -static_cast<float>(p.b_zero_point)),
        inv(1.0f / static_cast<float>(p.scale)),
        zero_point(static_cast<float>(p.zero_point)),
        a_zero_point(static_cast<float>(p.a_zero_point)),
        b_zero_point(static_cast<float>(p.b_zero_point)),
        relu(p.relu) {}
};

// qadd's scalar operation: dequantize_val, the sum, quantize_val.
uint8_t add_one(uint8_t a, uint8_t b, const AddConstants& k) {
  const float da = (static_cast<float>(a) - k.a_zero_point) * k.a_scale;
  const float db = (static_cast<float>(b) - k.b_zero_point) * k.b_scale;
  float c = da + db;
  if (k.relu) c = std::max(c, 0.0f);
  return quantize_one(c, k.inv, k.zero_point);
}

// Vectorized<quint8>::dequantize of 8 elements: fma(s, q, -s * zp).
__attribute__((target("avx2,fma"))) inline __m256 dequantize_eight(
    const uint8_t* q, float scale, float premul) {
  const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q));
  const __m256 f = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes));
  return _mm256_fmadd_ps(_mm256_set1_ps(scale), f, _mm256_set1_ps(premul));
}

// qadd's vectorised operation on 8 elements: the dequantized sum (ReLU),
// then QuantizeAvx2's multiply, clip at the largest float below 2^31,
// convert (round to nearest even), zero point added, clamp to 0..255.
__attribute__((target("avx2,fma"))) inline __m256i add_eight(
    const uint8_t* a, const uint8_t* b, const AddConstants& k) {
  __m256 c = _mm256_add_ps(dequantize_eight(a, k.a_scale, k.a_premul),
                           dequantize_eight(b, k.b_scale, k.b_premul));
  if (k.relu) {
    // vec::maximum: a NaN stays NaN (all-ones is a NaN).
    const __m256 zero = _mm256_setzero_ps();
    c = _mm256_or_ps(_mm256_max_ps(c, zero),
                     _mm256_cmp_ps(c, zero, _CMP_UNORD_Q));
  }
  __m256 t = _mm256_mul_ps(c, _mm256_set1_ps(k.inv));
  t = _mm256_min_ps(t, _mm256_set1_ps(2147483520.0f));
  const __m256i r = _mm256_add_epi32(
      _mm256_cvtps_epi32(t), _mm256_set1_epi32(static_cast<int>(k.zero_point)));
  return _mm256_max_epi32(_mm256_setzero_si256(),
                          _mm256_min_epi32(_mm256_set1_epi32(255), r));
}

// One block of work as cpu_kernel_vec runs it: groups of 64 vectorised,
// the rest one by one.
__attribute__((target("avx2,fma"))) void add_block_avx2(const uint8_t* a,
                                                        const uint8_t* b,
                                                        uint8_t* out, int64_t n,
                                                        const AddConstants& k) {
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    for (int64_t j = i; j < i + 64; j += 8) {
      store_eight(add_eight(a + j, b + j, k), out + j);
    }
  }
  for (; i < n; ++i) out[i] = add_one(a[i], b[i], k);
}

}  // namespace

void quantize_per_tensor_u8(const float* x, uint8_t* q, int64_t n, double scale,
                            int64_t zero_point) {
  const float inv = 1.0f / static_cast<float>(scale);
  const float zp = static_cast<float>(zero_point);
  if (has_avx2_fma()) return quantize_avx2(x, q, n, inv, zp);
  for (int64_t i = 0; i < n; ++i) q[i] = quantize_one(x[i], inv, zp);
}

void quantized_add_u8(const uint8_t* a, const uint8_t* b, uint8_t* out,
                      int64_t n, const QuantizedAddParams& params) {
  const AddConstants k(params);
  // TensorIterator's blocks: the whole range on one thread, else
  // at::parallel_for's cut with its grain size.
  constexpr int64_t kGrain = 32768;
  auto block = [&](int64_t begin, int64_t end) {
    if (has_avx2_fma()) {
      add_block_avx2(a + begin, b + begin, out + begin, end - begin, k);
    } else {
      for (int64_t i = begin; i < end; ++i) out[i] = add_one(a[i], b[i], k);
    }
  };
  if (n < kGrain || at::get_num_threads() == 1) {
    block(0, n);
  } else {
    at::parallel_for(0, n, kGrain, block);
  }
}

bool quantized_add_is_libtorchs() {
  static const bool yes =
      has_avx2_fma() &&
      at::show_config().find("CPU capability usage: AVX2") != std::string::npos;
  return yes;
}

}  // namespace fx
