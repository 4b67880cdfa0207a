// fx::choose_onednn_linear: whether one fx_inference.linear runs in the
// InferencePlan on oneDNN's matmul (onednn_linear.h) or on its reference
// kernel (at::linear, then the residual add and the activation, each an ATen
// op: fx_core/runtime/ops/inference_ops.cc) (issue 35, item 3).
//
// Neither wins everywhere. oneDNN 2.6's f32 matmul on AVX2 (no AVX-512)
// runs a transformer's projections 1.5-3x slower than the BLAS LibTorch
// calls at 128 rows (d_model 512, sequence 128, batch 1), yet it is ahead on
// the single-row classifier heads of the vision models, and it fuses the
// residual and the activation into the product where ATen makes a pass over
// the output for each.
//
// LinearPolicy::kMeasure (the default) chooses per linear by measurement:
// both are run on zero inputs of the planned shape at the current thread
// count (a warm-up run, then the best of three runs each; the reference
// kernel through the dispatcher, its output allocation and tail included,
// as the plan runs it), and the reference kernel is chosen when it takes at
// most 95% of oneDNN's time. Decisions are cached for the process, keyed by
// everything the timing depends on (weight and input sizes, bias, residual,
// activation, thread count): a model pays once per distinct shape (the
// encoder of BENCHMARKS.md: four shapes, a few milliseconds each).
// Except at more than one thread when the BLAS is OpenBLAS's pthread build:
// its thread pool and LibTorch's OpenMP pool then take turns on the cores,
// each spinning while the other works, a cost that shows in the whole graph
// but not in a linear timed alone (2 threads, linears chosen alone against
// all on oneDNN: encoder 49 against 51 ms, swin_t 172 against 124 ms), so
// oneDNN, on LibTorch's pool, is taken without measuring.
// kOnednn binds every linear oneDNN can compute; kAten none.
//
// The policy: the environment variable FX_LINEAR_KERNEL=measure|onednn|aten
// sets the initial one (unset: measure; other values are an error naming the
// variable); set_linear_policy() overrides it. Thread-safe.
#ifndef FX_CORE_COMPILE_LINEAR_CHOICE_H_
#define FX_CORE_COMPILE_LINEAR_CHOICE_H_

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "fx_core/compile/onednn_linear.h"

namespace fx {

enum class LinearPolicy { kMeasure, kOnednn, kAten };

LinearPolicy linear_policy();
void set_linear_policy(LinearPolicy policy);

// The oneDNN linear when the policy picks it; nullptr when the reference
// kernel is to run instead, or when oneDNN cannot run it
// (OnednnLinear::create).
std::unique_ptr<OnednnLinear> choose_onednn_linear(
    const at::Tensor& weight, const at::Tensor& bias,
    const FusedLinearParams& params, const std::vector<int64_t>& input_sizes);

// How many measurements choose_onednn_linear has made in this process (each
// one times both kernels on one shape), and how many of them the reference
// kernel won, for tests and the benchmarks.
size_t linear_measurements();
size_t linear_measurements_won_by_aten();

}  // namespace fx

#endif  // FX_CORE_COMPILE_LINEAR_CHOICE_H_
