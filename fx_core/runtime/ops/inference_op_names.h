// The targets of the fused ops the inference passes write (plugins/inference)
// and the InferencePlan binds: `torch.ops.fx_inference.NAME`, what torch.fx
// prints for the PyTorch custom op the SDK registers under that name
// (inference_ops.cc), so a graph after the passes converts to torch.fx and
// runs there. Files and plugins of before wrote `fx_inference.NAME`: read as
// the same op.
#ifndef FX_CORE_RUNTIME_OPS_INFERENCE_OP_NAMES_H_
#define FX_CORE_RUNTIME_OPS_INFERENCE_OP_NAMES_H_

#include <string_view>

namespace fx {

inline constexpr std::string_view kInferenceOpPrefix =
    "torch.ops.fx_inference.";
inline constexpr std::string_view kOldInferenceOpPrefix = "fx_inference.";

// NAME for `torch.ops.fx_inference.NAME` or `fx_inference.NAME`, else "".
inline std::string_view inference_op(std::string_view target) {
  for (std::string_view prefix : {kInferenceOpPrefix, kOldInferenceOpPrefix}) {
    if (target.substr(0, prefix.size()) == prefix) {
      return target.substr(prefix.size());
    }
  }
  return {};
}

}  // namespace fx

#endif  // FX_CORE_RUNTIME_OPS_INFERENCE_OP_NAMES_H_
