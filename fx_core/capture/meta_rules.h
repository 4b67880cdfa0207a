// Shape rules for operators LibTorch 1.13's C++ build has no meta kernel for
// (Python registers them in torch/_meta_registrations.py), so fx::make_fx's
// meta mode can run them: each makes empty meta results of the shapes and
// dtypes the real kernel would return.
//
// Covered (every common operator found without a meta kernel in 1.13's C++
// build): relu, relu_, hardtanh, hardswish, convolution, native_batch_norm,
// native_layer_norm, native_group_norm, _adaptive_avg_pool2d, embedding,
// index_select, where.self, native_dropout;
// _local_scalar_dense is refused, naming the operator.
#ifndef FX_CORE_CAPTURE_META_RULES_H_
#define FX_CORE_CAPTURE_META_RULES_H_

#include <ATen/core/stack.h>

namespace c10 {
struct FunctionSchema;
}  // namespace c10

namespace fx::capture {

// Runs the rule for `schema` on the arguments on top of `stack` (meta
// tensors), replacing them with the results. False when there is no rule.
// Throws fx::FxError for an operator whose result depends on data.
bool run_meta_rule(const c10::FunctionSchema& schema, torch::jit::Stack* stack);

}  // namespace fx::capture

#endif  // FX_CORE_CAPTURE_META_RULES_H_
