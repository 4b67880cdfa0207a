// fx::OnednnStep: a graph node the InferencePlan runs on oneDNN other than a
// convolution (plan/onednn_conv.h): fx_inference.linear (plan/onednn_linear.h)
// and fx_inference.matmul (plan/onednn_matmul.h), both written by the
// plugins/inference passes.
//
// bind_onednn_step() looks at one call as planned (its target, what each
// parameter is: a constant, an attribute tensor, or a value computed at run
// time with its recorded layout) and returns the bound step, or nullptr when
// the node is not one of these or oneDNN cannot compute it as the reference
// kernel does (then the plan runs the registry's kernel). A bound step reads
// the slots inputs() names and writes a contiguous float32 tensor of
// output_sizes() (the reference's layout); fits() says whether run-time
// operands still have the planned layouts (else the plan leaves its direct
// path for that run, as for its other direct kernels).
#ifndef FX_CORE_RUNTIME_PLAN_ONEDNN_STEPS_H_
#define FX_CORE_RUNTIME_PLAN_ONEDNN_STEPS_H_

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fx {

// One parameter of a call as the planner sees it.
struct PlannedParam {
  enum class Kind { kOther, kConstant, kAttribute, kValue };
  Kind kind = Kind::kOther;
  c10::IValue constant;                   // kConstant
  const at::Tensor* attribute = nullptr;  // kAttribute: a get_attr tensor
  int32_t slot = -1;                      // kValue
  // kValue: its recorded layout; float_cpu when a plain float32 CPU tensor.
  bool float_cpu = false;
  std::vector<int64_t> sizes, strides;
};

class OnednnStep {
 public:
  virtual ~OnednnStep() = default;
  // The slots run() reads, in the order it takes them.
  const std::vector<int32_t>& inputs() const { return inputs_; }
  virtual const std::vector<int64_t>& output_sizes() const = 0;
  virtual bool fits(const std::vector<const at::Tensor*>& operands) const = 0;
  virtual void run(const std::vector<const at::Tensor*>& operands,
                   const at::Tensor& out) = 0;

 protected:
  std::vector<int32_t> inputs_;
};

// `target`'s call with `params` whose result was recorded as `out` (a
// kValue parameter describing the result).
std::unique_ptr<OnednnStep> bind_onednn_step(
    const std::string& target, const std::vector<PlannedParam>& params,
    const PlannedParam& out);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_PLAN_ONEDNN_STEPS_H_
