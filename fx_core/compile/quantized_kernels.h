// The InferencePlan's elementwise int8 kernels, with the numbers LibTorch
// 1.13 computes on x86 (its AVX2 kernels: Debian's build runs them on every
// x86 CPU with AVX2, AVX-512 ones included), on quint8 data as raw bytes:
//
//  - quantize_per_tensor_u8: q = clamp(zp + rint(x * inv), 0, 255) with
//    inv = 1 / scale in float, as quantize_val computes each element; a
//    product that rounds to 2^63 or more, or NaN, gives 0 (the int64
//    conversion's value on x86, clamped);
//  - quantized_add_u8 (quantized::add, add_relu): each input dequantized,
//    the two added in float (ReLU), the sum quantized with the output's
//    scale and zero point, exactly as LibTorch's qadd kernel does it, which
//    computes the elements in blocks of 64 with AVX2 (a dequantize is
//    fma(s, q, -s * zp) there) and the rest of each block of work one by one
//    ((q - zp) * s): the same split, the same blocks of work as
//    at::parallel_for cuts them at the current thread count.
//
// Each runs AVX2 code when the CPU has it (and LibTorch's scalar formulas
// elsewhere: quantize's are then LibTorch's own; the add's are not, and a
// plan leaves the add to LibTorch: quantized_add_is_libtorchs()).
#ifndef FX_CORE_COMPILE_QUANTIZED_KERNELS_H_
#define FX_CORE_COMPILE_QUANTIZED_KERNELS_H_

#include <cstdint>

namespace fx {

void quantize_per_tensor_u8(const float* x, uint8_t* q, int64_t n, double scale,
                            int64_t zero_point);

struct QuantizedAddParams {
  double a_scale = 1.0, b_scale = 1.0, scale = 1.0;
  int64_t a_zero_point = 0, b_zero_point = 0, zero_point = 0;
  bool relu = false;  // add_relu
};
void quantized_add_u8(const uint8_t* a, const uint8_t* b, uint8_t* out,
                      int64_t n, const QuantizedAddParams& params);

// Whether quantized_add_u8 gives LibTorch's numbers in this process: this
// CPU has AVX2 and FMA, and LibTorch runs its AVX2 kernels (its "CPU
// capability usage" in at::show_config(); ATEN_CPU_CAPABILITY=default, or
// a build with AVX-512 kernels, would run others).
bool quantized_add_is_libtorchs();

}  // namespace fx

#endif  // FX_CORE_COMPILE_QUANTIZED_KERNELS_H_
