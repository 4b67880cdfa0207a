// fx::bind_pooling_module_step: the InferencePlan's pooling steps. A
// call_module of torch.nn's MaxPool2d, AvgPool2d or AdaptiveAvgPool2d on a
// 4-d float32 CPU input (and the calls bind_pooling_call_step takes) runs
// into a planned buffer instead of the module's LibTorch kernel: ATen's
// max_pool2d computes and drops the argmax indices (resnet50's stem pooling:
// 0.35-0.44 ms, about 1% of the network at 1 thread), and each module call
// allocates its result. MaxPool2d on a channels_last input runs
// max_pool_kernel.h (ATen's numbers, NaN included; NCHW inputs keep ATen's
// kernel); the averages run on oneDNN's pooling (onednn_pooling.h), on NCHW or
// channels_last inputs.
//
// Numbers: maxima are ATen's exactly (a NaN result's bits aside:
// max_pool_kernel.h), and so are the averages that sum in
// order and divide once, as ATen's do (every AvgPool2d; AdaptiveAvgPool2d
// on channels_last inputs, or with windows one row or column high). The
// others, a global average (ATen's is a mean: another order of sums) and
// ATen's NCHW adaptive windows (divided by the height, then the width),
// are within float32 rounding: bound only with PoolingRounding::kFloat32,
// which the plan asks for when the graph already departs from the
// reference kernels' rounding (it holds fx_inference ops: the inference
// passes ran), so the plan stays bitwise GraphModule::forward's on other
// graphs.
//
// The window is the module's as its kind describes it (module_config.h),
// with ATen's output size (ceil_mode included) and checks: the step is not
// bound, and the module's own kernel runs (and raises its errors), for
// return_indices=True, a divisor_override, padding over half the window,
// an output size below 1, an adaptive size that does not divide the input,
// or an average whose windows would reach past the padding (ceil_mode),
// which ATen divides by a smaller count than oneDNN. The module's
// configuration is read once, when the plan is built.
#ifndef FX_CORE_COMPILE_POOLING_STEPS_H_
#define FX_CORE_COMPILE_POOLING_STEPS_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "fx_core/compile/onednn_steps.h"

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace fx {

struct ModuleKind;

// Whether a step may round otherwise than the module's kernel.
enum class PoolingRounding { kExact, kFloat32 };

// The step for `module` of `kind` reading `input_slot`, recorded with
// `input_sizes` and `input_strides` (a float32 CPU tensor); nullptr when it
// is not one of the modules above or not as they require.
std::unique_ptr<OnednnStep> bind_pooling_module_step(
    const ModuleKind& kind, const torch::nn::Module& module, int32_t input_slot,
    const std::vector<int64_t>& input_sizes,
    const std::vector<int64_t>& input_strides, PoolingRounding rounding);

// The step for a call_function / call_method of `target` with `args` (its
// positional arguments as planned) writing `out`, or nullptr:
//   - torch.nn.functional.adaptive_avg_pool2d(input, output_size), as the
//     module above;
//   - input.mean(dim) and torch.mean(input, dim[, keepdim[, dtype=None]])
//     with dim the last two dimensions of a 4-d input (a global average:
//     mnasnet's head), only with PoolingRounding::kFloat32 (ATen's is a
//     mean, summed in another order).
std::unique_ptr<OnednnStep> bind_pooling_call_step(
    std::string_view target, const std::vector<PlannedParam>& args,
    const PlannedParam& out, PoolingRounding rounding);

// Whether `target` is one of the calls bind_pooling_call_step may bind
// (the plan builds a call's planned arguments only for those).
bool is_pooling_call(std::string_view target);

}  // namespace fx

#endif  // FX_CORE_COMPILE_POOLING_STEPS_H_
