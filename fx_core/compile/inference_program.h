// fx::InferencePlan::Program: one plan of an InferencePlan for one set of
// input layouts (inference_plan.h): the compiled steps, each bound to a
// direct ATen kernel, a fused pointwise kernel, a oneDNN step or the
// registry kernel, and the buffers planned for their results. Its members
// are defined by concern: loading and running (inference_program.cc),
// memory planning (inference_program_memory.cc), binding steps to kernels
// (inference_program_binding.cc).
//
// Internal to fx_core/compile (inference_plan's sources).
#ifndef FX_CORE_COMPILE_INFERENCE_PROGRAM_H_
#define FX_CORE_COMPILE_INFERENCE_PROGRAM_H_

#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>
#include <c10/core/GradMode.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/compile/buffer_pool.h"
#include "fx_core/compile/compiled_steps.h"
#include "fx_core/compile/direct_kernels.h"
#include "fx_core/compile/inference_plan.h"
#include "fx_core/compile/onednn_steps.h"
#include "fx_core/compile/pointwise_kernel.h"
#include "fx_core/compile/shared_weights.h"
#include "fx_core/compile/tensor_meta.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/runtime/runtime_codegen.h"
#include "fx_core/runtime/shape_guards.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {

// Whether the environment asks for plan profiles: FX_PLAN_PROFILE set to
// anything but "" or "0" when the program is built.
bool plan_profiling_requested();

// A call's arguments in order: an ATen operator's (bound as `*args,
// **kwargs`: a tuple and a dict) when it has no keyword arguments, else
// the parameters as bound to the op's schema.
std::vector<const ValueSource*> positional_sources(
    const std::vector<ValueSource>& params);

struct InferencePlan::Program {
  using Source = ValueSource;

  // Where a direct step's operand i comes from (fx_inference.pointwise: the
  // items of its `inputs` list).
  static const ValueSource& operand_source(const CompiledStep& step, size_t i,
                                           bool pointwise) {
    return pointwise ? step.params[0].items[i] : step.params[i];
  }

  struct Operand {
    int iter_index = 0;  // operand index in the TensorIterator
    int32_t slot = -1;
    TensorMeta meta;
  };
  // One piece of a concatenation copied into its slice of the shared
  // buffer: by an iterator built on both when the piece is a planned
  // buffer, else from the slot at run time.
  struct CatCopy {
    int32_t piece = -1;  // slot
    at::Tensor slice;
    std::optional<at::TensorIterator> iter;
  };
  // A compiled step and what binding it to an ATen kernel adds.
  struct Step : CompiledStep {
    explicit Step(CompiledStep&& compiled)
        : CompiledStep(std::move(compiled)) {}
    bool direct = false;
    DirectOp direct_op = DirectOp::kAdd;
    c10::Scalar s1, s2;  // alpha; clamp bounds
    std::optional<at::TensorIterator> iter;
    std::vector<Operand> variable;  // operands re-pointed each run
    at::Tensor buffer;              // the planned result (unless fresh)
    bool fresh = false;             // allocate the result each run
    TensorMeta out_meta;
    size_t num_operands = 0;
    std::vector<at::Tensor> operands;  // as the iterator was built on
    // fx_inference.pointwise in one pass: the kernel (operands: the
    // `inputs` list's items).
    std::shared_ptr<PointwiseKernel> pointwise;
    bool in_place = false;  // the result overwrites a dead operand's buffer
    // fx_inference.conv2d / linear / matmul on oneDNN, and its operands
    // (re-filled each run: no allocation).
    std::shared_ptr<OnednnStep> onednn;
    std::vector<const at::Tensor*> onednn_operands;
    bool residual_in_place = false;  // sums into the dead residual's buffer
    bool ran_onednn = false;         // this run's result came from `onednn`
    // A clamp module fused into the int8 convolution step producing slot
    // `forwards` (quantized_steps.h): when that step ran on oneDNN, this
    // call's result is its result, unchanged.
    int32_t forwards = -1;
    // A 1x1 convolution step whose oneDNN kernel also computes the
    // depthwise convolution at slot `fuses` (its only reader, which then
    // forwards this step's result): when it runs on oneDNN its result is
    // that slot's (fuse_depthwise_convs).
    int32_t fuses = -1;
    // The slot whose recorded layout this step's result has: its own, or
    // the depthwise call's it fuses.
    int32_t result_slot() const { return fuses >= 0 ? fuses : slot; }
    // A torch.cat whose result is a view of a buffer shared with the wider
    // cats of the same pieces (inference_program_cat.cc): the pieces it
    // copies there first (those no narrower cat copied).
    bool cat_in_place = false;
    std::vector<CatCopy> cat_copies;
    at::Tensor cat_shared;  // the family's buffer (`buffer` is its view)
  };
  // Per alias group (indexed by its root slot): the last step reading any
  // of its values, and whether one of them reaches the output.
  struct GroupLiveness {
    std::vector<size_t> last;
    std::vector<bool> escapes;
  };

  std::vector<Step> steps;  // compile_steps' steps, in graph order
  size_t num_slots = 0;
  size_t num_inputs = 0;
  std::vector<size_t> last_use;        // per slot (CompiledSteps::last_use)
  std::vector<c10::IValue> input_sig;  // tensors: unused; else the value
  std::vector<TensorMeta> input_meta;
  bool plannable = true;  // false: inputs we cannot compare (lists...)
  std::vector<TensorMeta> slot_meta;
  std::vector<at::Tensor> buffers;
  size_t buffer_bytes = 0;
  std::vector<at::Tensor> scratch;  // stand-in memory for variable operands
  // Dynamic plans: the memory every specialisation's buffers live in, and
  // its generation when the iterators last pointed into it.
  SharedBuffers* shared_buffers = nullptr;
  uint64_t buffers_generation = 0;
  size_t direct_fallbacks = 0;
  bool diverged = false;  // this run left the plan (see run_direct)
  bool stale = false;     // re-plan before the next run

  std::vector<c10::IValue> slots;
  std::vector<c10::IValue> buffer_args;

  // FX_PLAN_PROFILE=1 (inference_program_profile.cc): each run's call steps
  // timed (wall clock), printed to stderr per step and per engine when the
  // program goes (a static plan's at its end or re-plan; each dynamic
  // specialisation's when evicted or at the end).
  struct StepTime {
    std::vector<int64_t> ns;  // the first kSamples runs' times
    int64_t total_ns = 0;
    uint64_t calls = 0;
    static constexpr size_t kSamples = 4096;  // bounds a server's memory
    void add(int64_t t);
  };
  bool profiling = false;
  uint64_t profiled_runs = 0;
  std::vector<StepTime> step_times;  // per step, when profiling
  ~Program();
  std::string engine(const Step& step) const;
  std::string result_text(const Step& step) const;
  void print_profile(std::ostream& out) const;

  // Kernels tried inside the network (inference_program_trial.cc): the
  // steps built with two (OnednnStep::kernels) and of those, how many kept
  // kernel 1 (not the one timed fastest alone); while trying, each call
  // step's time in the last run (execute fills it instead of the profile).
  size_t trial_steps = 0;
  size_t trial_groups = 0;  // decisions: steps of one trial_group() share one
  size_t trial_overturned = 0;
  std::vector<int64_t>* trial_ns = nullptr;
  void trial_kernels(const std::vector<c10::IValue>& inputs);

  void load(CompiledSteps compiled);
  void follow_shared_buffers();
  c10::IValue execute(std::vector<c10::IValue> inputs, bool record);
  c10::IValue run_kernel(const Step& step);
  void run_direct(Step& step);
  bool matches(const std::vector<c10::IValue>& inputs) const;

  void plan_direct();
  bool bind_onednn_steps(bool layout_setting);
  bool bind_module_step(Step& step);
  bool bind_pooling_steps();
  void fuse_quantized_clamps();
  void fuse_depthwise_convs();
  std::vector<size_t> reader_counts() const;
  PlannedParam planned_param(const Source& s) const;
  PlannedParam planned_result(const Step& step) const;  // step's own value
  void run_onednn(Step& step);
  std::vector<bool> find_candidates(AliasGroups& groups);
  GroupLiveness group_liveness(AliasGroups& groups) const;
  void place_direct(Step& step, size_t index, AliasGroups& groups,
                    const GroupLiveness& live, BufferPool& pool);
  bool take_dead_operand(Step& step, size_t index, AliasGroups& groups,
                         const GroupLiveness& live, BufferPool& pool,
                         at::Tensor* out);
  bool only_reader_of_group(const Step& step, int32_t slot,
                            AliasGroups& groups) const;
  bool bind_pointwise(Step& step);
  // torch.cat steps of one alias group concatenating prefixes of one list
  // of pieces along one dimension (inference_program_cat.cc): their
  // results are views of one buffer, of the widest's planned layout.
  struct CatFamily {
    int32_t group = -1;
    int64_t dim = 0;
    TensorMeta meta;    // the widest cat's result
    at::Tensor buffer;  // taken when the first cat is placed
    size_t copied = 0;  // pieces already copied in, in order
  };
  std::vector<CatFamily> find_cat_families(const std::vector<bool>& candidate,
                                           AliasGroups& groups,
                                           const GroupLiveness& live,
                                           std::vector<int>* family_of) const;
  bool family_reads_safe(const std::vector<size_t>& members, int32_t group,
                         const std::vector<int32_t>& root_of,
                         const std::vector<bool>& candidate) const;
  void place_cat_in_place(Step& step, CatFamily& family, BufferPool& pool);
  void run_cat_in_place(Step& step);
  void place_onednn(Step& step, AliasGroups& groups, const GroupLiveness& live,
                    BufferPool& pool);
  at::Tensor quantized_buffer(Step& step, int32_t group, BufferPool& pool);
  void residuals_in_place(const std::vector<bool>& candidate,
                          AliasGroups& groups, GroupLiveness* live);
  bool bind_direct(Step& step);
  bool operands_fit(const Step& step, size_t num_operands) const;
  void make_operands(Step& step);
  at::Tensor stand_in(size_t i, int32_t slot, Step& step);
};

}  // namespace fx

#endif  // FX_CORE_COMPILE_INFERENCE_PROGRAM_H_
