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

}  // namespace fx::testing

#endif  // TESTS_TESTING_ONEDNN_SUPPORT_H_
