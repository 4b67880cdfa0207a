// fx::choose_linear: which kernel one fx_inference.linear runs on in the
// InferencePlan (issue 35, item 3): oneDNN's matmul (onednn_linear.h), the
// plan's own AVX-512 product with its weights prefetched a block ahead
// (panel_linear.h), the BLAS split over LibTorch's threads (blas_linear.h),
// or its reference kernel (at::linear, then the residual add and the
// activation, each an ATen op: fx_core/runtime/ops/inference_ops.cc).
//
// None wins everywhere. oneDNN 2.6's f32 matmul on AVX2 (no AVX-512) runs a
// transformer's projections 1.5-3x slower than OpenBLAS at 128 rows
// (d_model 512, sequence 128, batch 1), yet it is ahead on the single-row
// classifier heads of the vision models, and it fuses the residual and the
// activation into the product. On AVX-512, PanelLinear is ahead of oneDNN
// where the weights dominate the traffic (a transformer's projections at
// 128 rows) and behind where the rows do (1024 rows).
//
// LinearPolicy::kMeasure (the default) chooses per linear by measurement:
// the candidates are run on zero inputs of the planned shape at the current
// thread count, with their weights flushed from the caches before each run
// as a network's layers find them (a warm-up run, then the best of three
// runs each), and the fastest other is kept over the first candidate
// (oneDNN where it can run the op) when it takes at most 95% of its time.
// The candidates: oneDNN, PanelLinear where the CPU has AVX-512F, and
// BlasLinear when the BLAS is OpenBLAS or else the reference kernel
// (through the dispatcher, its output allocation and tail included, as the
// plan runs it). They pack their own weights into memory unmapped when
// they go, so none leaves a packed copy behind; the winner is then built as
// any other step (with the dynamic plan's shared weights). The reference kernel
// is left out at more than one thread when the BLAS keeps a thread pool of its
// own (fx::blas_has_own_thread_pool): the two pools then take turns on the
// cores, a cost that shows in the whole graph but not in a linear timed
// alone (swin_t at 2 threads: 172 ms with linears chosen that way, 124 ms
// all on oneDNN); with no other candidate left, oneDNN is taken without
// measuring. Decisions are cached for the process, keyed by everything the
// timing depends on (weight and input sizes, bias, residual, activation,
// thread count): a model pays once per distinct shape (the encoder of
// BENCHMARKS.md: four shapes, a few milliseconds each).
//
// kOnednn, kPanel, kBlas and kAten take that kernel wherever it can run the
// op (the reference kernel elsewhere).
//
// The policy: the environment variable
// FX_LINEAR_KERNEL=measure|onednn|panel|blas|aten sets the initial one
// (unset: measure; other values are an error naming the variable);
// set_linear_policy() overrides it. Thread-safe.
#ifndef FX_CORE_COMPILE_LINEAR_CHOICE_H_
#define FX_CORE_COMPILE_LINEAR_CHOICE_H_

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "fx_core/compile/fused_linear.h"

namespace fx {

enum class LinearPolicy { kMeasure, kOnednn, kBlas, kAten, kPanel };
enum class LinearKernel { kOnednn, kBlas, kAten, kPanel };

LinearPolicy linear_policy();
void set_linear_policy(LinearPolicy policy);

// The kernel chosen for one linear; `impl` is null for the reference
// kernel (kAten).
struct ChosenLinear {
  LinearKernel kernel = LinearKernel::kAten;
  std::unique_ptr<FusedLinearKernel> impl;
};

ChosenLinear choose_linear(const at::Tensor& weight, const at::Tensor& bias,
                           const FusedLinearParams& params,
                           const std::vector<int64_t>& input_sizes);

// The kernels the plan tries inside the network for one linear
// (network_trial.h), as conv_choice.h's ConvTrial does for convolutions:
// under kMeasure, where the timing alone chose oneDNN or PanelLinear and
// the CPU runs both, `measured` (the one chosen, kept unless the other is
// 5% faster in the network) and `other`, each packing its weights
// privately into memory unmapped when it goes.
// Which of the two is faster depends on how the network leaves the caches
// and on how the threads share the rows or panels, which a linear timed
// alone does not see. nullopt otherwise (any other policy, the trial
// switched off, the BLAS or the reference kernel chosen, a build failing).
// `group` is the timing decision the trial puts to the test (its entry in
// the process's cache of decisions): linears of the same shapes and fused
// operations share it, and the trial decides them together.
struct LinearTrial {
  ChosenLinear measured, other;
  const void* group = nullptr;
};
std::optional<LinearTrial> linear_trial(
    const at::Tensor& weight, const at::Tensor& bias,
    const FusedLinearParams& params, const std::vector<int64_t>& input_sizes);

// `kernel`'s kind (one of a LinearTrial's) built again as any other step
// is, with the SharedWeights in scope; `kernel` itself when that fails.
ChosenLinear rebuild_linear(ChosenLinear kernel, const at::Tensor& weight,
                            const at::Tensor& bias,
                            const FusedLinearParams& params,
                            const std::vector<int64_t>& input_sizes);

// How many measurements choose_linear has made in this process (each one
// times the candidates on one shape), and how many of them `kernel` won,
// for tests and the benchmarks.
size_t linear_measurements();
size_t linear_measurements_won_by(LinearKernel kernel);

}  // namespace fx

#endif  // FX_CORE_COMPILE_LINEAR_CHOICE_H_
