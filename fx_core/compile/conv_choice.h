// fx::choose_onednn_conv: the oneDNN algorithm (and with it the activation
// layout) one fx_inference.conv2d runs with in the InferencePlan (issue 17,
// item 3: "choose channels_last where it is faster").
//
// The rule, from measurements on resnet50, mobilenet_v3_large and
// efficientnet_b0 (BENCHMARKS.md, issue 17): every convolution runs
// ConvAlgorithm::kDirect with NHWC (channels_last) activations. For direct
// convolutions oneDNN 2.6's fastest kernels on AVX-512 (brgemm) are NHWC
// ones: asked for any layout, it picks NHWC itself, so no blocked layout is
// offered there. The one kernel that needs the blocked nChw16c layout and
// can beat them is Winograd (3x3, stride 1): timed alone it is 1.1-1.6x
// faster on resnet50's 3x3 layers at 56x56 to 14x14 (its reorders from and
// to NHWC included), but inside the whole network it gained nothing
// measurable at 1 thread and lost at 2 (min of 30 runs: 28.8 against
// 32.2 ms): its transformed weights are 1.8x larger and the reorders touch
// every activation twice more. So kDirect is the default policy.
//
// ConvPolicy::kMeasure chooses per convolution by measurement instead:
// where kWinograd applies (OnednnConv::winograd_applies) both are built and
// timed on zero inputs of the planned shape at the current thread count (a
// warm-up run, then the best of three runs each, Winograd's reorders
// included), and Winograd is kept when it is at least 5% faster. Decisions
// are cached for the process, keyed by everything the timing depends on
// (weight and input sizes, padding, activation, bias, thread count): a model
// pays once per distinct shape (resnet50 at 224x224: four shapes, tens of
// milliseconds). kWinograd runs Winograd wherever it applies.
//
// The policy: the environment variable FX_CONV_ALGORITHM=direct|measure|
// winograd sets the initial one (unset: direct; other values are an error
// naming the variable); set_conv_policy() overrides it. Thread-safe.
#ifndef FX_CORE_COMPILE_CONV_CHOICE_H_
#define FX_CORE_COMPILE_CONV_CHOICE_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "fx_core/compile/onednn_conv.h"

namespace fx {

enum class ConvPolicy { kDirect, kMeasure, kWinograd };

ConvPolicy conv_policy();
void set_conv_policy(ConvPolicy policy);

// The convolution as the policy picks it; nullptr when oneDNN cannot run it
// (OnednnConv::create).
std::unique_ptr<OnednnConv> choose_onednn_conv(
    const at::Tensor& weight, const at::Tensor& bias,
    const FusedConvParams& params, const std::vector<int64_t>& input_sizes);

// How many measurements choose_onednn_conv has made in this process (each
// one times both algorithms of one shape), for tests.
size_t conv_measurements();

}  // namespace fx

#endif  // FX_CORE_COMPILE_CONV_CHOICE_H_
