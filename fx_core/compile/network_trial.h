// fx::network_trial: whether the InferencePlan tries kernels inside the
// network at plan build (inference_program_trial.cc).
//
// conv_choice.h and linear_choice.h time their candidate kernels one op at
// a time, each alone. Where that timing is a close call or picks a kernel
// other than the default, they hand the plan two kernels (ConvTrial,
// LinearTrial), and the plan runs the network with each in turns and keeps
// the faster there, for all the ops of one shape together: a kernel can
// time faster alone and lose inside the network (BENCHMARKS.md, "Kernels
// tried in the network").
//
// The environment variable FX_NETWORK_TRIAL=0|1 sets it (unset: 1; other
// values are an error naming the variable), read on first use;
// set_network_trial() overrides it. With 0 each op keeps the kernel timed
// fastest alone. Thread-safe.
#ifndef FX_CORE_COMPILE_NETWORK_TRIAL_H_
#define FX_CORE_COMPILE_NETWORK_TRIAL_H_

namespace fx {

bool network_trial();
void set_network_trial(bool on);

}  // namespace fx

#endif  // FX_CORE_COMPILE_NETWORK_TRIAL_H_
