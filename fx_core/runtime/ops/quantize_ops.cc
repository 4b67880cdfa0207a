// torch.quantize_per_tensor, hand-written for speed (registered by
// register_torch_ops): on a float32 CPU tensor it computes what LibTorch
// computes, four elements at a time.
//
// LibTorch 1.13 quantizes per tensor element by element (quantize_val, a
// function call per element): 0.5-0.8 ms for a 1x3x224x224 input on this
// project's machines, the largest cost outside the kernels of an int8
// resnet50 or mobilenet_v2 run. The arithmetic is the same here, in the same
// float operations: q = zero_point + round-half-to-even(x * (1.0f /
// float(scale))), saturated to the dtype's range; the results are bitwise
// LibTorch's (quantize_ops_test compares them, ties and saturation
// included).
//
// Contract: the entry returns what torch.quantize_per_tensor returns. The
// fast path takes contiguous float32 CPU input, quint8 or qint8, a positive
// finite scale and a zero point in the dtype's range (numbers, or
// one-element tensors read with item() as LibTorch reads them), and
// elements whose scaled value is finite and within +-2^21; anything else
// (a list of tensors, per-element qparams, other dtypes, strides, NaN or
// infinite values, values LibTorch's own conversion would overflow on, bad
// qparams and their errors) is LibTorch's kernel.
#include <ATen/ATen.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "fx_core/runtime/op_registry.h"
#include "fx_core/runtime/ops/builtin_ops.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace fx::ops {
namespace {

// Beyond this a scaled value is refused: LibTorch converts it to int64
// after adding the zero point in float, exact only well inside 2^24.
constexpr float kLargest = 2097152.0f;  // 2^21

// One element as LibTorch's quantize_val computes it; false when it is not
// one the fast path takes.
template <typename Q>
bool quantize_one(float x, float inverse, int32_t zero_point, Q* out) {
  const float t = x * inverse;
  if (!(std::fabs(t) <= kLargest)) return false;
  const int32_t v = zero_point + static_cast<int32_t>(std::nearbyint(t));
  const int32_t lo = std::numeric_limits<Q>::min();
  const int32_t hi = std::numeric_limits<Q>::max();
  *out = static_cast<Q>(v < lo ? lo : (v > hi ? hi : v));
  return true;
}

// Quantizes n elements; false (the output unfinished) when one is not
// taken. Q is uint8_t (quint8) or int8_t (qint8).
template <typename Q>
bool quantize_all(const float* in, int64_t n, float inverse, int32_t zero_point,
                  Q* out) {
  int64_t i = 0;
#if defined(__SSE2__)
  // cvtps2dq rounds as the MXCSR says: to nearest, ties to even, as
  // std::nearbyint does in the default mode; the saturating packs clamp.
  const __m128 scale_by = _mm_set1_ps(inverse);
  const __m128 largest = _mm_set1_ps(kLargest);
  const __m128 sign = _mm_set1_ps(-0.0f);
  const __m128i zp = _mm_set1_epi32(zero_point);
  for (; i + 16 <= n; i += 16) {
    __m128i words[4];
    int bad = 0;
    for (int k = 0; k < 4; ++k) {
      const __m128 t = _mm_mul_ps(_mm_loadu_ps(in + i + 4 * k), scale_by);
      bad |=
          _mm_movemask_ps(_mm_cmple_ps(_mm_andnot_ps(sign, t), largest)) ^ 0xF;
      words[k] = _mm_add_epi32(_mm_cvtps_epi32(t), zp);
    }
    if (bad != 0) return false;
    const __m128i low = _mm_packs_epi32(words[0], words[1]);
    const __m128i high = _mm_packs_epi32(words[2], words[3]);
    const __m128i bytes = std::is_signed_v<Q> ? _mm_packs_epi16(low, high)
                                              : _mm_packus_epi16(low, high);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), bytes);
  }
#endif
  for (; i < n; ++i) {
    if (!quantize_one(in[i], inverse, zero_point, out + i)) return false;
  }
  return true;
}

at::Tensor fast_quantize_per_tensor(const at::Tensor& x, double scale,
                                    int64_t zero_point, c10::ScalarType dtype) {
  const bool quint8 = dtype == c10::kQUInt8;
  const int64_t lo = quint8 ? 0 : -128, hi = quint8 ? 255 : 127;
  const float inverse = 1.0f / static_cast<float>(scale);
  const bool fast = (quint8 || dtype == c10::kQInt8) && x.defined() &&
                    x.device().is_cpu() && x.scalar_type() == c10::kFloat &&
                    x.layout() == c10::kStrided && x.is_contiguous() &&
                    !x.is_quantized() && std::isfinite(scale) && scale > 0 &&
                    std::isfinite(inverse) && zero_point >= lo &&
                    zero_point <= hi;
  if (fast) {
    // LibTorch's result takes the input's suggested memory format; the
    // elements are written in the input's order, so the strides must agree.
    at::Tensor out = at::_empty_affine_quantized(
        x.sizes(), at::device(c10::kCPU).dtype(dtype), scale, zero_point,
        x.suggest_memory_format());
    if (out.strides() != x.strides()) {
      return at::quantize_per_tensor(x, scale, zero_point, dtype);
    }
    const float* in = x.data_ptr<float>();
    const int32_t zp = static_cast<int32_t>(zero_point);
    const bool done =
        quint8 ? quantize_all(in, x.numel(), inverse, zp,
                              reinterpret_cast<uint8_t*>(out.data_ptr()))
               : quantize_all(in, x.numel(), inverse, zp,
                              reinterpret_cast<int8_t*>(out.data_ptr()));
    if (done) return out;
  }
  return at::quantize_per_tensor(x, scale, zero_point, dtype);
}

}  // namespace

void register_quantize_per_tensor(OpRegistry& r) {
  r.add(Opcode::kCallFunction, "torch.quantize_per_tensor",
        "input, scale, zero_point, dtype", [](OpArgs& a) -> c10::IValue {
          const c10::ScalarType dtype = a.optional_dtype(3).value();
          if (!a[0].isTensor()) {
            return at::quantize_per_tensor(a.tensor_list(0), a.tensor(1),
                                           a.tensor(2), dtype);
          }
          if (!a[1].isTensor() && !a[2].isTensor()) {
            return fast_quantize_per_tensor(a.tensor(0), a.to_double(1),
                                            a.to_int(2), dtype);
          }
          const at::Tensor scale = a.tensor(1), zero_point = a.tensor(2);
          if (scale.numel() != 1 || zero_point.numel() != 1) {
            return at::quantize_per_tensor(a.tensor(0), scale, zero_point,
                                           dtype);
          }
          return fast_quantize_per_tensor(a.tensor(0), scale.item().toDouble(),
                                          zero_point.item().toLong(), dtype);
        });
}

}  // namespace fx::ops
