// fx::choose_onednn_conv: the oneDNN algorithm (and with it the activation
// layout) one fx_inference.conv2d runs with in the InferencePlan (issue 17,
// item 3: "choose channels_last where it is faster").
//
// The rule: every convolution runs ConvAlgorithm::kDirect with NHWC
// (channels_last) activations, except a 3x3 stride-1 one where oneDNN's
// Winograd kernel (blocked nChw16c, reordered from and to NHWC) measures
// faster on this machine. For direct convolutions oneDNN's fastest kernels
// on AVX-512 (brgemm) are NHWC ones: asked for any layout it picks NHWC
// itself, so no blocked layout is offered there. Whether Winograd wins
// depends on the machine: on one AVX-512 VM it gained nothing inside
// resnet50 at 1 thread and lost at 2 (its transformed weights are 1.8x
// larger, its reorders touch every activation twice more); on a 2-vCPU
// AMD EPYC with 1 MB of L2 per core it made resnet50's 3x3 layers 15-30%
// faster in the network (BENCHMARKS.md, "Winograd measured by default").
// So the default policy measures.
//
// ConvPolicy::kMeasure (the default) chooses per convolution: where
// kWinograd applies (OnednnConv::winograd_applies) both are built and timed
// on zero inputs of the planned shape at the current thread count (a warm-up
// run, then the best of three runs each, Winograd's reorders included),
// with the weights evicted from the caches before each timed run, as they
// arrive from memory inside a network at batch 1 (OnednnConv::
// evict_weights). The candidates pack their own weights into memory that
// is unmapped when they are dropped (huge_pages.h, TransientBlocksScope);
// the winner is then built as any other step (with the dynamic plan's
// shared weights). Winograd is kept when it is at least 5% faster.
// Decisions are cached for the process, keyed by everything the timing
// depends on (weight and input sizes, padding, activation, bias, thread
// count): a model pays once per distinct shape (resnet50 at 224x224: four
// shapes, tens of milliseconds). Two processes may decide differently on a
// close call; their results then differ within float32 rounding (Winograd
// rounds a little more: within 1e-4 relative on the tested models).
// kDirect runs the direct kernel everywhere (bitwise reproducible from run
// to run and process to process); kWinograd runs Winograd wherever it
// applies.
//
// The policy: the environment variable FX_CONV_ALGORITHM=direct|measure|
// winograd sets the initial one (unset: measure; other values are an error
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

// How many shapes choose_onednn_conv has timed in this process (both
// algorithms built and run; not the shapes oneDNN has no Winograd kernel
// for), for tests.
size_t conv_measurements();

}  // namespace fx

#endif  // FX_CORE_COMPILE_CONV_CHOICE_H_
