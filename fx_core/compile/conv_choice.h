// fx::choose_onednn_conv: the oneDNN kernel (algorithm and implementation,
// and with them the activation layout) one fx_inference.conv2d runs with in
// the InferencePlan (issue 17, item 3: "choose channels_last where it is
// faster"; issue 35: "depthwise convolutions at ORT's speed").
//
// The rule: every convolution runs ConvAlgorithm::kDirect with NHWC
// (channels_last) activations on the kernel oneDNN lists first, except
// where another kernel measures faster on this machine:
//   - another of oneDNN's direct NHWC kernels of the same instruction set
//     (OnednnConv::implementations). oneDNN lists its brgemm kernels
//     first, but on a 2-vCPU AMD EPYC (AVX-512) its older jit kernels were
//     up to 1.4x faster on some shapes: mnasnet's 3x3 / 2 stem (brgconv 162
//     us, jit 133 us), its depthwise convolutions (brdgmm_dw 118 us, jit_dw
//     98 us at 72 channels, 56x56) and some 1x1 ones (32 -> 16 at 112x112:
//     brgconv_1x1 168 us, jit 131 us; BENCHMARKS.md, "oneDNN's kernels
//     measured per shape");
//   - oneDNN's Winograd kernels for a 3x3 stride-1 convolution (blocked
//     nChw16c, reordered from and to NHWC). On one AVX-512 VM they gained
//     nothing inside resnet50 at 1 thread and lost at 2 (the transformed
//     weights are larger, the reorders touch every activation twice more);
//     on the EPYC (1 MB of L2 per core) they made resnet50's 3x3 layers
//     15-30% faster in the network ("Winograd measured by default"). At
//     batch 1 oneDNN offers two, F(2x2, 3x3) first and F(4x4, 3x3), whose
//     weights are 1.8x and 4x the direct ones: with the weights cold, F(4x4)
//     took 529 us against 600 at 64 channels, 56x56, and 1,514 against 676
//     at 256 channels, 14x14 (BENCHMARKS.md, "Both Winograd kernels").
// So the default policy measures.
//
// ConvPolicy::kMeasure (the default) chooses per convolution shape: every
// candidate is built and timed on zero inputs of the planned shape at the
// current thread count (a warm-up run, then the best of three runs each,
// Winograd's reorders included), with the weights evicted from the caches
// before each timed run, as they arrive from memory inside a network at
// batch 1 (OnednnConv::evict_weights). The candidates pack their own
// weights into memory that is unmapped when they are dropped (huge_pages.h,
// TransientBlocksScope); the winner is then built as any other step (with
// the dynamic plan's shared weights). oneDNN's first choice is kept unless
// another is at least 5% faster. Decisions are cached for the process,
// keyed by everything the timing depends on (weight and input sizes,
// stride, padding, dilation, activation, bias, residual, thread count): a
// model pays once per distinct shape (mnasnet1_0 at 224x224: 33 shapes,
// about a second of plan build). Two processes may decide differently on a
// close call; their results then differ within float32 rounding (the
// kernels sum in different orders; Winograd rounds a little more: within
// 1e-4 relative on the tested models). kDirect runs oneDNN's first direct
// kernel everywhere (bitwise reproducible from run to run and process to
// process); kWinograd runs Winograd wherever it applies and oneDNN's first
// direct kernel elsewhere.
//
// The policy: the environment variable FX_CONV_ALGORITHM=direct|measure|
// winograd sets the initial one (unset: measure; other values are an error
// naming the variable); set_conv_policy() overrides it. Thread-safe.
#ifndef FX_CORE_COMPILE_CONV_CHOICE_H_
#define FX_CORE_COMPILE_CONV_CHOICE_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
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

// The kernels the plan tries inside the network for one convolution
// (network_trial.h, inference_program_trial.cc). Under ConvPolicy::kMeasure,
// when timing alone chose a kernel other than oneDNN's first choice for
// this shape: `measured` (that kernel, kept unless the first choice is 5%
// faster in the network) and `first_choice`, both packing
// their weights privately into memory unmapped when they go (as measure's
// candidates do), so the one the plan drops leaves nothing behind; the plan
// then rebuilds the one it keeps with rebuild_conv. Alone, with its weights
// cold, a kernel may measure faster and still lose inside the network: on
// a 2-vCPU Intel Xeon (2 MB of L2 per core), Winograd timed faster alone
// on densenet121's 3x3 layers at 28x28 and 56x56 and took 2-3x the direct
// kernel's time in the network (BENCHMARKS.md). nullopt when there is
// nothing to try (any other policy, the trial switched off:
// network_trial.h, one kernel offered, the first choice chosen, a build
// failing).
// `group` is the timing decision the trial puts to the test (its entry in
// the process's cache of decisions): convolutions of the same shapes and
// fused operations share it, and the trial decides them together.
struct ConvTrial {
  std::unique_ptr<OnednnConv> measured, first_choice;
  const void* group = nullptr;
};
std::optional<ConvTrial> conv_trial(const at::Tensor& weight,
                                    const at::Tensor& bias,
                                    const FusedConvParams& params,
                                    const std::vector<int64_t>& input_sizes);

// Records `algorithm` and `implementation` (one of
// OnednnConv::implementations; empty: oneDNN's first) as this shape's
// decision, as if the timing had chosen them: tests pin the measured kernel
// with it, whatever this machine's timing would say.
void record_conv_decision(const at::Tensor& weight, const at::Tensor& bias,
                          const FusedConvParams& params,
                          const std::vector<int64_t>& input_sizes,
                          ConvAlgorithm algorithm,
                          const std::string& implementation);

// `kernel` (one of a ConvTrial's) built again as any other step is (with
// the SharedWeights in scope); `kernel` itself when oneDNN declines.
std::unique_ptr<OnednnConv> rebuild_conv(std::unique_ptr<OnednnConv> kernel,
                                         const at::Tensor& weight,
                                         const at::Tensor& bias,
                                         const FusedConvParams& params);

// The convolution and the depthwise `tail` after it as one primitive
// (OnednnConv::create_with_depthwise), or nullptr (the plan runs the two
// nodes apart), as the fusion policy says:
//   - kMeasure (the default): fused when that kernel, timed as above
//     (weights cold, best of three, its reorders from and to NHWC
//     included), takes at most 95% of the two convolutions as
//     choose_onednn_conv builds them, run one after the other. Only under
//     ConvPolicy::kMeasure: kDirect and kWinograd fuse nothing (each node
//     on the kernel they name, as before). On the EPYC at batch 8,
//     efficientnet_b0's 16 -> 96 channels at 112x112 with a 3x3 / 2
//     depthwise after it took 6.8 ms fused against 5.1 + 3.0 ms apart
//     inside the network (BENCHMARKS.md). Cached per shape as
//     choose_onednn_conv's decisions are; close calls may go either way
//     from process to process (results then differ within float32
//     rounding).
//   - kAlways: fused wherever oneDNN has a kernel of its own for the pair.
//   - kNever: never.
// The environment variable FX_DEPTHWISE_FUSION=measure|always|never sets
// the initial policy (unset: measure; other values are an error naming
// the variable); set_depthwise_fusion_policy() overrides it. Thread-safe.
enum class FusionPolicy { kMeasure, kAlways, kNever };

FusionPolicy depthwise_fusion_policy();
void set_depthwise_fusion_policy(FusionPolicy policy);

std::unique_ptr<OnednnConv> choose_depthwise_fusion(
    const at::Tensor& weight, const at::Tensor& bias,
    const FusedConvParams& params, const std::vector<int64_t>& input_sizes,
    const DepthwiseTail& tail);

// The FusedConvParams of the depthwise convolution `tail` describes over
// `channels` channels.
FusedConvParams depthwise_params(const DepthwiseTail& tail, int64_t channels);

// How many shapes choose_onednn_conv has timed in this process (two or
// more kernels built and run; not the shapes oneDNN offers one kernel
// for), for tests.
size_t conv_measurements();

}  // namespace fx

#endif  // FX_CORE_COMPILE_CONV_CHOICE_H_
