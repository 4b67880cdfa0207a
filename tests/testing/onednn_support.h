// What this machine's oneDNN runs, for tests of the InferencePlan's
// convolution algorithms.
//
// oneDNN implements its f32 Winograd convolution for AVX-512 CPUs only; on
// others it declines it, OnednnConv::create(..., kWinograd) returns nullptr,
// and the plan runs the direct kernel (fx_core/compile/onednn_conv.h). Tests
// that expect Winograd steps skip, saying why, where oneDNN declines.
#ifndef TESTS_TESTING_ONEDNN_SUPPORT_H_
#define TESTS_TESTING_ONEDNN_SUPPORT_H_

#include <string>

namespace fx::testing {

// Empty when oneDNN builds a Winograd convolution here (probed once per
// process with a 3x3, stride-1 convolution Winograd applies to); otherwise
// why a test expecting Winograd steps cannot run.
std::string winograd_skip_reason();

// Empty when oneDNN has a kernel of its own for a 1x1 convolution (16 -> 48
// channels, 56x56, batch 4, nChw16c) with a depthwise 3x3 after it, stride
// 1 and 2 (asked of oneDNN directly, once per process); otherwise why a
// test expecting OnednnConv::create_with_depthwise to fuse cannot run.
// oneDNN 2.6 has one (jit_1x1 with the depthwise convolution in its loop)
// on an AMD EPYC with AVX-512, but offers only its reference
// ref_fused_convolution on an Intel Xeon with AVX-512 and AMX.
std::string depthwise_fusion_skip_reason();

}  // namespace fx::testing

#endif  // TESTS_TESTING_ONEDNN_SUPPORT_H_
