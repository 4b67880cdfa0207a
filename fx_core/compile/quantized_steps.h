// fx::bind_quantized_module_step: the InferencePlan's int8 steps. A
// call_module of torch.ao.nn.quantized's Conv2d or of
// torch.ao.nn.intrinsic.quantized's ConvReLU2d (what convert_fx and the
// quantize plugin's quantize_lower write) runs on fx::OnednnQConv
// (onednn_qconv.h) instead of the module's LibTorch kernel
// (quantized::conv2d), and one of their Linear or LinearReLU on a 2-d input
// on fx::OnednnQLinear (onednn_qlinear.h) instead of quantized::linear: the
// same oneDNN int8 computation and the same bytes, the weights packed once
// for the plan, the result written into a planned buffer, without the
// per-call work of LibTorch's operator (an output allocated, the primitive
// looked up in a cache, a linear's weights repacked).
//
// The step takes the module's int8 weight, float bias, output scale and
// zero point (and a convolution's stride, padding, dilation and groups) as
// the plan is built (later changes to the module are not seen, as for the
// float convolutions' packed weights). The input's scale and zero point are
// read from the quint8 input on each run: its primitive is built for the first
// pair and again whenever they change. fits() refuses inputs other than
// per-tensor quint8 tensors of the planned sizes with a usable scale and
// zero point (the plan then runs the module as it would without the step).
// FX_INT8_CONV=registry (default: plan) binds none of these module steps:
// every such module runs its LibTorch kernel; any other value is an FxError
// when a plan is built. They are bound only where the modules run on
// LibTorch's onednn engine ($FX_QENGINE unset or onednn).
#ifndef FX_CORE_COMPILE_QUANTIZED_STEPS_H_
#define FX_CORE_COMPILE_QUANTIZED_STEPS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/compile/onednn_steps.h"

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace fx {

struct ModuleKind;

// A ReLU6, Hardtanh or ReLU module (torch.nn's, as PyTorch's quantized
// mobilenets call them on quint8 tensors) after an int8 convolution step whose
// result nothing else reads is fused into it as a clip of the real-valued
// result (onednn_qconv.h: the same bytes as the convolution then the
// module); the plan then hands the module's call the convolution's result.
// The module's clamp bounds, or nullopt when it is none of these.
std::optional<std::pair<double, double>> module_clamp(
    const ModuleKind& kind, const torch::nn::Module& module);
// Fuses the clamp [lo, hi] into `step` when it is an int8 convolution step
// without a ReLU or clamp of its own; whether it did.
bool fuse_quantized_clamp(OnednnStep& step, double lo, double hi);

// The step for `module` of `kind` reading its input from `input_slot`,
// recorded with `input_sizes`; nullptr when it is not a 2-d quantized
// convolution or a quantized linear layer oneDNN computes as LibTorch does
// (onednn_qconv.h, onednn_qlinear.h).
std::unique_ptr<OnednnStep> bind_quantized_module_step(
    const ModuleKind& kind, const torch::nn::Module& module, int32_t input_slot,
    const std::vector<int64_t>& input_sizes);

// The step for a call of `target` with `params` whose result was recorded
// as `out`, when it is one of the quantized ops the plan computes itself,
// with LibTorch 1.13's numbers (quantized_kernels.h): torch.quantize_per_tensor
// of a row-major float32 CPU tensor into quint8 (its scale and zero point
// numbers or 0-dim attribute tensors: convert_fx's graphs; LibTorch's own
// kernel is scalar: 0.5 ms for a 224x224 image; not where LibTorch was
// built with FBGEMM, which quantizes otherwise), and quantized::add /
// add_relu of two quint8 tensors of one layout (contiguous or
// channels_last) into a planned buffer (where LibTorch runs its AVX2
// kernels: quantized_add_is_libtorchs()). Attribute scales and zero points
// are read once, when the plan is built, as the modules' weights are.
// nullptr for any other call.
std::unique_ptr<OnednnStep> bind_quantized_op_step(
    const std::string& target, const std::vector<PlannedParam>& params,
    const PlannedParam& out);

}  // namespace fx

#endif  // FX_CORE_COMPILE_QUANTIZED_STEPS_H_
