// The DispatchStub declarations must match how LibTorch was built: on x86-64
// its kernels come in DEFAULT, AVX2 and AVX512 variants, and
// DispatchStubImpl::get_call_ptr takes one pointer per variant.
#if defined(__x86_64__) && !defined(HAVE_AVX2_CPU_DEFINITION)
#define HAVE_AVX512_CPU_DEFINITION
#define HAVE_AVX2_CPU_DEFINITION
#endif

#include "fx_core/runtime/plan/inference_plan.h"

#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>
#include <ATen/native/BinaryOps.h>
#include <ATen/native/UnaryOps.h>
#include <c10/core/GradMode.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/runtime/plan/compiled_steps.h"
#include "fx_core/runtime/plan/conv_choice.h"
#include "fx_core/runtime/plan/onednn_conv.h"
#include "fx_core/runtime/plan/onednn_steps.h"
#include "fx_core/runtime/plan/pointwise_kernel.h"
#include "fx_core/runtime/runtime_codegen.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

// ATen/native/TensorCompare.h declares these too, but it cannot be included
// with UnaryOps.h (both declare clamp_stub).
namespace at::native {
DECLARE_DISPATCH(void (*)(TensorIteratorBase&, const c10::Scalar&,
                          const c10::Scalar&),
                 clamp_scalar_stub);
DECLARE_DISPATCH(void (*)(TensorIteratorBase&, c10::Scalar),
                 clamp_min_scalar_stub);
DECLARE_DISPATCH(void (*)(TensorIteratorBase&, c10::Scalar),
                 clamp_max_scalar_stub);
}  // namespace at::native

namespace fx {
namespace {

using Source = ValueSource;

// A tensor's layout as planned.
struct TensorMeta {
  bool is_tensor = false;
  std::vector<int64_t> sizes, strides;
  c10::ScalarType dtype = c10::ScalarType::Undefined;
  c10::Device device = c10::kCPU;
  bool plain = false;  // defined, strided, dense CPU data, no conj/neg bit

  static TensorMeta of(const c10::IValue& v) {
    TensorMeta m;
    if (!v.isTensor()) return m;
    const at::Tensor& t = v.toTensor();
    if (!t.defined()) return m;
    m.is_tensor = true;
    m.sizes = t.sizes().vec();
    m.strides = t.layout() == c10::kStrided ? t.strides().vec()
                                            : std::vector<int64_t>{};
    m.dtype = t.scalar_type();
    m.device = t.device();
    m.plain = t.layout() == c10::kStrided && t.device().is_cpu() &&
              !t.is_quantized() && !t.is_conj() && !t.is_neg() &&
              !t.is_sparse() && !t.is_mkldnn() && t.numel() > 0 &&
              !t.unsafeGetTensorImpl()->is_wrapped_number();
    return m;
  }
  // Same sizes, strides, dtype and device as `t`.
  bool matches(const at::Tensor& t) const {
    return t.defined() && t.scalar_type() == dtype && t.device() == device &&
           t.layout() == c10::kStrided &&
           t.sizes() == c10::IntArrayRef(sizes) &&
           t.strides() == c10::IntArrayRef(strides) && !t.is_conj() &&
           !t.is_neg();
  }
  bool same_layout(const TensorMeta& o) const {
    return sizes == o.sizes && strides == o.strides && dtype == o.dtype;
  }
  size_t nbytes() const {
    int64_t span = 1;
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] == 0) return 0;
      span += (sizes[i] - 1) * strides[i];
    }
    return static_cast<size_t>(span) * c10::elementSize(dtype);
  }
};

// The direct kernels.
enum class DirectOp : uint8_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kClampMin,  // relu is clamp_min(x, 0) in ATen
  kClampMax,
  kClamp,
  kSigmoid,
  kTanh,
  kNeg,
  kPointwise,  // fx_inference.pointwise (pointwise_kernel.h)
};

bool is_number(const c10::IValue& v) {
  return v.isDouble() || v.isInt() || v.isBool();
}

c10::Scalar to_scalar(const c10::IValue& v) {
  if (v.isDouble()) return v.toDouble();
  if (v.isBool()) return v.toBool();
  return v.toInt();
}

// ATen's wrapped_scalar_tensor, as the registry's kernels build it.
at::Tensor wrap_number(const c10::IValue& v) {
  at::Tensor t = v.isDouble() ? at::scalar_tensor(v.toDouble(), at::kDouble)
                 : v.isBool() ? at::scalar_tensor(v.toBool(), at::kBool)
                              : at::scalar_tensor(v.toInt(), at::kLong);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

// The direct kernel a call target names and its tensor operand count, before
// its other arguments are checked (clamp becomes kClampMin / kClampMax once
// its bounds are known).
struct DirectMatch {
  DirectOp op;
  size_t num_operands;
};

std::optional<DirectMatch> match_target(const OpDef& def) {
  const std::string& t = def.target;
  const bool method = def.op == Opcode::kCallMethod;
  auto is = [&](std::initializer_list<const char*> functions,
                const char* method_name) {
    if (method) return t == method_name;
    for (const char* f : functions) {
      if (t == f) return true;
    }
    return false;
  };
  if (is({"operator.add", "torch.add"}, "add")) return {{DirectOp::kAdd, 2}};
  if (is({"operator.sub", "torch.sub"}, "sub")) return {{DirectOp::kSub, 2}};
  if (is({"operator.mul", "torch.mul"}, "mul")) return {{DirectOp::kMul, 2}};
  if (is({"operator.truediv", "torch.div"}, "div")) {
    return {{DirectOp::kDiv, 2}};
  }
  if (is({"torch.relu", "torch.nn.functional.relu"}, "relu")) {
    return {{DirectOp::kClampMin, 1}};
  }
  if (is({"torch.clamp"}, "clamp")) return {{DirectOp::kClamp, 1}};
  if (is({"torch.sigmoid"}, "sigmoid")) return {{DirectOp::kSigmoid, 1}};
  if (is({"torch.tanh"}, "tanh")) return {{DirectOp::kTanh, 1}};
  if (is({"torch.neg", "operator.neg"}, "neg")) return {{DirectOp::kNeg, 1}};
  if (is({"fx_inference.pointwise"}, "")) return {{DirectOp::kPointwise, 0}};
  return std::nullopt;
}

// Parameter i's value when it is a constant, else null.
const c10::IValue* constant_param(const std::vector<Source>& p, size_t i) {
  return i < p.size() && p[i].kind == Source::Kind::kConstant ? &p[i].constant
                                                              : nullptr;
}

// Where a direct step's operand i comes from (fx_inference.pointwise: the
// items of its `inputs` list).
const ValueSource& operand_source(const CompiledStep& step, size_t i,
                                  bool pointwise) {
  return pointwise ? step.params[0].items[i] : step.params[i];
}

// clamp's bounds: numbers (not NaN) or None, not both None. Sets *op to the
// kernel the bounds call for.
bool bind_clamp_bounds(const std::vector<Source>& p, DirectOp* op,
                       c10::Scalar* s1, c10::Scalar* s2) {
  const c10::IValue* lo = constant_param(p, 1);
  const c10::IValue* hi = constant_param(p, 2);
  if (lo == nullptr || hi == nullptr) return false;
  if (!(lo->isNone() || is_number(*lo)) || !(hi->isNone() || is_number(*hi))) {
    return false;
  }
  if (lo->isNone() && hi->isNone()) return false;
  if (!lo->isNone()) *s1 = to_scalar(*lo);
  if (!hi->isNone()) *s2 = to_scalar(*hi);
  for (const c10::IValue* b : {lo, hi}) {
    if (b->isDouble() && std::isnan(b->toDouble())) return false;
  }
  *op = lo->isNone()   ? DirectOp::kClampMax
        : hi->isNone() ? DirectOp::kClampMin
                       : DirectOp::kClamp;
  return true;
}

// The arguments a direct kernel takes besides its tensor operands, which
// must be constants it supports: add/sub's alpha (a number), div's
// rounding_mode (None), F.relu's inplace (False), clamp's bounds. Sets *op
// (clamp), *s1 (alpha; relu's and clamp's lower bound) and *s2 (clamp's
// upper bound).
bool bind_scalars(const std::string& t, const std::vector<Source>& p,
                  DirectOp* op, c10::Scalar* s1, c10::Scalar* s2) {
  switch (*op) {
    case DirectOp::kAdd:
    case DirectOp::kSub: {
      *s1 = c10::Scalar(int64_t{1});
      if (t == "operator.add" || t == "operator.sub") return true;
      const c10::IValue* alpha = constant_param(p, 2);
      if (alpha == nullptr || !is_number(*alpha)) return false;
      *s1 = to_scalar(*alpha);
      return true;
    }
    case DirectOp::kDiv: {
      if (t == "operator.truediv") return true;
      const c10::IValue* mode = constant_param(p, 2);
      return mode != nullptr && mode->isNone();
    }
    case DirectOp::kClampMin: {  // relu
      *s1 = c10::Scalar(int64_t{0});
      if (t != "torch.nn.functional.relu") return true;
      const c10::IValue* inplace = constant_param(p, 1);
      return inplace != nullptr && inplace->isBool() && !inplace->toBool();
    }
    case DirectOp::kClamp:
      return bind_clamp_bounds(p, op, s1, s2);
    default:
      return true;
  }
}

// Whether a direct kernel can write `out`: a plain CPU tensor of a dtype
// the kernel computes in place of ATen's own (floating point for div,
// sigmoid, tanh; bool only for add and mul; no complex).
bool result_fits(DirectOp op, const TensorMeta& out) {
  if (!out.is_tensor || !out.plain) return false;
  if (op == DirectOp::kPointwise) return out.dtype == c10::kFloat;
  const bool float_op =
      op == DirectOp::kDiv || op == DirectOp::kSigmoid || op == DirectOp::kTanh;
  if (float_op && !c10::isFloatingType(out.dtype)) return false;
  if (out.dtype == c10::kBool && op != DirectOp::kAdd && op != DirectOp::kMul) {
    return false;
  }
  return !c10::isComplexType(out.dtype);
}

// The TensorIterator ATen's structured kernel builds for `op`.
at::TensorIterator make_iterator(DirectOp op, at::Tensor& out,
                                 const std::vector<at::Tensor>& operands) {
  switch (op) {
    case DirectOp::kAdd:
    case DirectOp::kSub:
    case DirectOp::kMul:
      return at::TensorIterator::binary_op(out, operands[0], operands[1]);
    case DirectOp::kDiv:
      return at::TensorIterator::binary_float_op(out, operands[0], operands[1]);
    case DirectOp::kSigmoid:
    case DirectOp::kTanh:
      return at::TensorIterator::unary_float_op(out, operands[0]);
    default:
      return at::TensorIterator::unary_op(out, operands[0]);
  }
}

// Whether `it` works on `out` and `operands` themselves: no operand replaced
// by a cast copy, nothing resized.
bool iterates_in_place(const at::TensorIterator& it, const at::Tensor& out,
                       const std::vector<at::Tensor>& operands) {
  if (it.noutputs() != 1 ||
      it.ntensors() != static_cast<int>(1 + operands.size()) ||
      !it.output_base(0).is_same(out)) {
    return false;
  }
  for (size_t j = 0; j < operands.size(); ++j) {
    if (operands[j].unsafeGetTensorImpl()->is_wrapped_number()) continue;
    if (!it.input_base(static_cast<int>(j)).is_same(operands[j])) return false;
  }
  return true;
}

// Runs `op`'s DispatchStub on the iterator's current operands.
void run_stub(DirectOp op, at::TensorIterator& it, const c10::Scalar& s1,
              const c10::Scalar& s2) {
  switch (op) {
    case DirectOp::kAdd:
      at::native::add_stub(c10::kCPU, it, s1);
      break;
    case DirectOp::kSub:
      at::native::add_stub(c10::kCPU, it, -s1);
      break;
    case DirectOp::kMul:
      at::native::mul_stub(c10::kCPU, it);
      break;
    case DirectOp::kDiv:
      at::native::div_true_stub(c10::kCPU, it);
      break;
    case DirectOp::kClampMin:
      at::native::clamp_min_scalar_stub(c10::kCPU, it, s1);
      break;
    case DirectOp::kClampMax:
      at::native::clamp_max_scalar_stub(c10::kCPU, it, s2);
      break;
    case DirectOp::kClamp:
      at::native::clamp_scalar_stub(c10::kCPU, it, s1, s2);
      break;
    case DirectOp::kSigmoid:
      at::native::sigmoid_stub(c10::kCPU, it);
      break;
    case DirectOp::kTanh:
      at::native::tanh_stub(c10::kCPU, it);
      break;
    case DirectOp::kNeg:
      at::native::neg_stub(c10::kCPU, it);
      break;
    case DirectOp::kPointwise:  // run by its PointwiseKernel
      break;
  }
}

// Union-find over slots: the values that may share memory.
class AliasGroups {
 public:
  explicit AliasGroups(size_t num_slots) : parent_(num_slots) {
    for (size_t i = 0; i < num_slots; ++i) {
      parent_[i] = static_cast<int32_t>(i);
    }
  }
  int32_t find(int32_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void unite(int32_t a, int32_t b) {
    const int32_t root_b = find(b);
    parent_[find(a)] = root_b;
  }
  bool is_root(size_t x) const { return parent_[x] == static_cast<int32_t>(x); }

 private:
  std::vector<int32_t> parent_;
};

// The planned result buffers: one free list over every layout; the buffers
// an alias group took go back on it after the group's last use.
class BufferPool {
 public:
  explicit BufferPool(size_t num_groups) : group_buffers_(num_groups) {}

  // A buffer of `meta`'s layout for `group`: a free one, or a new one
  // (adding its bytes to *bytes).
  at::Tensor take(const TensorMeta& meta, int32_t group, size_t* bytes) {
    auto it = std::find_if(free_.begin(), free_.end(), [&](size_t b) {
      return pool_[b].meta.same_layout(meta);
    });
    size_t b;
    if (it != free_.end()) {
      b = *it;
      free_.erase(it);
    } else {
      b = pool_.size();
      pool_.push_back(
          {meta, at::empty_strided(meta.sizes, meta.strides,
                                   at::TensorOptions().dtype(meta.dtype))});
      *bytes += meta.nbytes();
    }
    group_buffers_[group].push_back(b);
    return pool_[b].tensor;
  }
  // Hands `buffer`, taken by group `from`, over to group `to` (a result
  // written in place of a dead operand); false when `from` does not hold it.
  bool transfer(const at::Tensor& buffer, int32_t from, int32_t to) {
    std::vector<size_t>& owned = group_buffers_[from];
    for (auto it = owned.begin(); it != owned.end(); ++it) {
      if (pool_[*it].tensor.is_same(buffer)) {
        group_buffers_[to].push_back(*it);
        owned.erase(it);
        return true;
      }
    }
    return false;
  }
  void release_group(int32_t group) {
    for (size_t b : group_buffers_[group]) free_.push_back(b);
  }
  std::vector<at::Tensor> tensors() const {
    std::vector<at::Tensor> all;
    for (const Buffer& b : pool_) all.push_back(b.tensor);
    return all;
  }

 private:
  struct Buffer {
    TensorMeta meta;
    at::Tensor tensor;
  };
  std::vector<Buffer> pool_;
  std::vector<size_t> free_;  // indices into pool_
  std::vector<std::vector<size_t>> group_buffers_;
};

}  // namespace

struct InferencePlan::Program {
  struct Operand {
    int iter_index = 0;  // operand index in the TensorIterator
    int32_t slot = -1;
    TensorMeta meta;
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
    // fx_inference.conv2d on oneDNN: its input and residual slots (-1: none).
    std::shared_ptr<OnednnConv> conv;
    int32_t conv_input = -1, conv_residual = -1;
    // fx_inference.pointwise in one pass: the kernel (operands: the
    // `inputs` list's items).
    std::shared_ptr<PointwiseKernel> pointwise;
    bool in_place = false;  // the result overwrites a dead operand's buffer
    // fx_inference.linear / matmul on oneDNN.
    std::shared_ptr<OnednnStep> onednn;
    bool conv_in_place = false;  // writes into the (dead) residual's buffer
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
  size_t direct_fallbacks = 0;
  bool diverged = false;  // this run left the plan (see run_direct)
  bool stale = false;     // re-plan before the next run

  std::vector<c10::IValue> slots;
  std::vector<c10::IValue> buffer_args;

  void compile(const Graph& graph, torch::nn::Module& root);
  c10::IValue execute(std::vector<c10::IValue> inputs, bool record);
  c10::IValue run_kernel(const Step& step);
  void run_direct(Step& step);
  bool matches(const std::vector<c10::IValue>& inputs) const;

  void plan_direct();
  bool bind_convs();
  bool bind_conv(Step& step);
  void run_conv(Step& step);
  void bind_onednn_steps();
  PlannedParam planned_param(const Source& s) const;
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
  void place_conv(Step& step, AliasGroups& groups, const GroupLiveness& live,
                  BufferPool& pool);
  void residuals_in_place(const std::vector<bool>& candidate,
                          AliasGroups& groups, GroupLiveness* live);
  bool bind_direct(Step& step);
  bool operands_fit(const Step& step, size_t num_operands) const;
  void make_operands(Step& step);
  at::Tensor stand_in(size_t i, int32_t slot, Step& step);
};

void InferencePlan::Program::compile(const Graph& graph,
                                     torch::nn::Module& root) {
  CompiledSteps compiled = compile_steps(graph, root);
  steps.reserve(compiled.steps.size());
  for (CompiledStep& step : compiled.steps) {
    // `*args` and defaults: planned only when given explicitly.
    if (step.var_args || step.has_default) plannable = false;
    steps.emplace_back(std::move(step));
  }
  num_slots = compiled.num_slots;
  num_inputs = compiled.num_inputs;
  last_use = std::move(compiled.last_use);
  slots.assign(num_slots, c10::IValue());
  buffer_args.assign(compiled.max_params, c10::IValue());
}

// ------------------------------------------------------------------ running

c10::IValue InferencePlan::Program::execute(std::vector<c10::IValue> inputs,
                                            bool record) {
  if (record) slot_meta.assign(num_slots, TensorMeta());
  diverged = false;
  if (inputs.size() != num_inputs) {
    throw FxError(cat("forward() takes ", num_inputs, " inputs but ",
                      inputs.size(), " were given"));
  }
  for (Step& step : steps) {
    try {
      switch (step.kind) {
        case Step::Kind::kPlaceholder:
          slots[step.slot] = std::move(inputs[step.input_index]);
          break;
        case Step::Kind::kConstant:
          slots[step.slot] = step.constant;
          break;
        case Step::Kind::kCallOp:
        case Step::Kind::kCallModule:
          if (step.conv) {
            run_conv(step);
          } else if (step.onednn) {
            run_onednn(step);
          } else if (step.direct) {
            run_direct(step);
          } else {
            slots[step.slot] = run_kernel(step);
          }
          break;
        case Step::Kind::kOutput: {
          c10::IValue out = step.params[0].get(slots);
          for (c10::IValue& s : slots) s = c10::IValue();
          return out;
        }
      }
    } catch (const std::exception& e) {
      for (c10::IValue& s : slots) s = c10::IValue();
      throw node_error(*step.node, e);
    }
    if (record && step.slot >= 0) {
      slot_meta[step.slot] = TensorMeta::of(slots[step.slot]);
    }
    for (int32_t slot : step.release) slots[slot] = c10::IValue();
  }
  return c10::IValue();
}

// The registry's kernel; the step's last reads take their values over.
c10::IValue InferencePlan::Program::run_kernel(const Step& step) {
  return call_step(step, step.last_reads, slots, buffer_args);
}

void InferencePlan::Program::run_direct(Step& step) {
  at::TensorIterator& it = *step.iter;
  if (diverged) {
    slots[step.slot] = run_kernel(step);
    return;
  }
  for (const Operand& op : step.variable) {
    const c10::IValue& v = slots[op.slot];
    if (!v.isTensor() || !op.meta.matches(v.toTensor())) {
      // Not the planned layout: from here on this run takes the registries'
      // kernels (later direct steps may read this step's planned buffer),
      // and the next run re-plans.
      ++direct_fallbacks;
      diverged = true;
      stale = true;
      slots[step.slot] = run_kernel(step);
      return;
    }
    it.unsafe_replace_operand(op.iter_index, v.toTensor().data_ptr());
  }
  at::Tensor out = step.buffer;
  if (step.fresh) {
    out = at::empty_strided(step.out_meta.sizes, step.out_meta.strides,
                            at::TensorOptions()
                                .dtype(step.out_meta.dtype)
                                .device(step.out_meta.device));
    it.unsafe_replace_operand(0, out.data_ptr());
  }
  if (step.pointwise) {
    step.pointwise->run(it);
  } else {
    run_stub(step.direct_op, it, step.s1, step.s2);
  }
  slots[step.slot] = std::move(out);
}

bool InferencePlan::Program::matches(
    const std::vector<c10::IValue>& inputs) const {
  if (inputs.size() != num_inputs) return false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const c10::IValue& v = inputs[i];
    if (input_meta[i].is_tensor) {
      if (!v.isTensor() || !input_meta[i].matches(v.toTensor())) return false;
      continue;
    }
    const c10::IValue& want = input_sig[i];
    if (v.tagKind() != want.tagKind()) return false;
    if (v.isNone()) continue;
    if (v.isInt() && v.toInt() == want.toInt()) continue;
    if (v.isDouble() && (v.toDouble() == want.toDouble())) continue;
    if (v.isBool() && v.toBool() == want.toBool()) continue;
    if (v.isString() && v.toStringRef() == want.toStringRef()) continue;
    return false;
  }
  return true;
}

// ----------------------------------------------------------------- planning

// Binds direct candidates in graph order (operands may come from earlier
// candidates' buffers), giving them buffers planned from liveness.
void InferencePlan::Program::plan_direct() {
  AliasGroups groups(num_slots);
  std::vector<bool> candidate = find_candidates(groups);
  GroupLiveness live = group_liveness(groups);
  residuals_in_place(candidate, groups, &live);
  // The groups whose last use is each step; escaping groups keep theirs.
  std::vector<std::vector<int32_t>> groups_ending(steps.size());
  for (size_t s = 0; s < num_slots; ++s) {
    if (groups.is_root(s) && !live.escapes[s]) {
      groups_ending[live.last[s]].push_back(static_cast<int32_t>(s));
    }
  }
  BufferPool pool(num_slots);
  for (size_t i = 0; i < steps.size(); ++i) {
    if (candidate[i] && (steps[i].conv || steps[i].onednn)) {
      place_conv(steps[i], groups, live, pool);
    } else if (candidate[i]) {
      place_direct(steps[i], i, groups, live, pool);
    }
    for (int32_t r : groups_ending[i]) pool.release_group(r);
  }
  buffers = pool.tensors();
}

// The steps a direct kernel may run. Any other call's result may alias its
// tensor arguments (views, in-place modules): one group.
std::vector<bool> InferencePlan::Program::find_candidates(AliasGroups& groups) {
  std::vector<bool> candidate(steps.size(), false);
  for (size_t i = 0; i < steps.size(); ++i) {
    Step& step = steps[i];
    candidate[i] = step.conv || step.onednn || bind_direct(step);
    if (!candidate[i] && step.is_call()) {
      for (const Source& s : step.params) {
        s.for_each_slot([&](int32_t slot) { groups.unite(step.slot, slot); });
      }
    }
  }
  return candidate;
}

InferencePlan::Program::GroupLiveness InferencePlan::Program::group_liveness(
    AliasGroups& groups) const {
  std::vector<bool> escapes(num_slots, false);
  for (const Step& step : steps) {
    if (step.kind != Step::Kind::kOutput) continue;
    for (const Source& s : step.params) {
      s.for_each_slot([&](int32_t slot) { escapes[slot] = true; });
    }
  }
  GroupLiveness live{std::vector<size_t>(num_slots, 0),
                     std::vector<bool>(num_slots, false)};
  for (size_t s = 0; s < num_slots; ++s) {
    int32_t r = groups.find(static_cast<int32_t>(s));
    live.last[r] = std::max(live.last[r], last_use[s]);
    if (escapes[s]) live.escapes[r] = true;
  }
  return live;
}

// The step's result buffer (fresh each run when its group escapes; a dead
// operand's, else one from the pool) and its TensorIterator; on failure the
// step is left to the registry (its group keeps the buffer taken until the
// group's end).
void InferencePlan::Program::place_direct(Step& step, size_t index,
                                          AliasGroups& groups,
                                          const GroupLiveness& live,
                                          BufferPool& pool) {
  const int32_t r = groups.find(step.slot);
  step.fresh = live.escapes[r];
  at::Tensor out;
  if (step.fresh) {
    out = at::empty_strided(step.out_meta.sizes, step.out_meta.strides,
                            at::TensorOptions().dtype(step.out_meta.dtype));
  } else {
    step.in_place = take_dead_operand(step, index, groups, live, pool, &out);
    if (!step.in_place) out = pool.take(step.out_meta, r, &buffer_bytes);
    step.buffer = out;
  }
  make_operands(step);
  bool ok = true;
  try {
    at::TensorIterator it =
        step.pointwise ? step.pointwise->make_iterator(out, step.operands)
                       : make_iterator(step.direct_op, out, step.operands);
    ok = iterates_in_place(it, out, step.operands);
    if (ok) step.iter.emplace(std::move(it));
  } catch (const c10::Error&) {
    ok = false;
  }
  if (!ok) {
    step.variable.clear();
    step.operands.clear();
    step.buffer = at::Tensor();
    step.pointwise.reset();
    step.in_place = false;
    return;
  }
  step.direct = true;
  if (step.fresh) step.buffer = at::Tensor();
}

// In place: an operand held in a planned buffer (a direct or oneDNN step's,
// not fresh) whose alias group is dead after step `index` and whose layout
// is the result's gives the result its buffer (handed over to the result's
// group). Elementwise kernels read each element before writing it at the
// same offset, so out may be that operand.
bool InferencePlan::Program::take_dead_operand(Step& step, size_t index,
                                               AliasGroups& groups,
                                               const GroupLiveness& live,
                                               BufferPool& pool,
                                               at::Tensor* out) {
  const bool pointwise = step.direct_op == DirectOp::kPointwise;
  for (size_t i = 0; i < step.num_operands; ++i) {
    const Source& s = operand_source(step, i, pointwise);
    if (s.kind != Source::Kind::kSlot) continue;
    const Step& producer = steps[s.slot];
    const int32_t g = groups.find(s.slot);
    if (!producer.direct || producer.fresh || !producer.buffer.defined() ||
        live.escapes[g] || live.last[g] != index ||
        !producer.out_meta.same_layout(step.out_meta) ||
        producer.out_meta.device != step.out_meta.device) {
      continue;
    }
    if (!only_reader_of_group(step, s.slot, groups) ||
        !pool.transfer(producer.buffer, g, groups.find(step.slot))) {
      continue;
    }
    *out = producer.buffer;
    return true;
  }
  return false;
}

// Whether no operand of `step` but `slot` itself may alias `slot` (a view of
// it read at other offsets would see the result being written).
bool InferencePlan::Program::only_reader_of_group(const Step& step,
                                                  int32_t slot,
                                                  AliasGroups& groups) const {
  const bool pointwise = step.direct_op == DirectOp::kPointwise;
  const int32_t g = groups.find(slot);
  for (size_t i = 0; i < step.num_operands; ++i) {
    const Source& s = operand_source(step, i, pointwise);
    if (s.kind == Source::Kind::kSlot && s.slot != slot &&
        groups.find(s.slot) == g) {
      return false;
    }
  }
  return true;
}

// ------------------------------------------------------ oneDNN convolutions

namespace {

constexpr const char* kFusedConv = "fx_inference.conv2d";

// An int or a sequence of ints as two values (conv2d's stride, ...).
bool int_pair(const c10::IValue& v, std::vector<int64_t>* out) {
  if (v.isInt()) {
    out->assign(2, v.toInt());
    return true;
  }
  std::vector<c10::IValue> items;
  if (v.isList()) {
    for (const c10::IValue& e : v.toListRef()) items.push_back(e);
  } else if (v.isTuple()) {
    for (const c10::IValue& e : v.toTupleRef().elements()) items.push_back(e);
  } else {
    return false;
  }
  if (items.size() == 1) items.push_back(items[0]);
  if (items.size() != 2) return false;
  out->clear();
  for (const c10::IValue& e : items) {
    if (!e.isInt()) return false;
    out->push_back(e.toInt());
  }
  return true;
}

// fx_inference.conv2d's non-tensor arguments (parameters 3..6 and 8..10),
// when all are constants of the right types.
bool conv_params(const std::vector<Source>& p, FusedConvParams* out) {
  for (size_t i : {3, 4, 5, 6, 8, 9, 10}) {
    if (constant_param(p, i) == nullptr) return false;
  }
  if (!int_pair(p[3].constant, &out->stride) ||
      !int_pair(p[4].constant, &out->padding) ||
      !int_pair(p[5].constant, &out->dilation) || !p[6].constant.isInt() ||
      !p[8].constant.isString() || !is_number(p[9].constant) ||
      !is_number(p[10].constant)) {
    return false;
  }
  out->groups = p[6].constant.toInt();
  out->activation = p[8].constant.toStringRef();
  out->min_val = to_scalar(p[9].constant).toDouble();
  out->max_val = to_scalar(p[10].constant).toDouble();
  return true;
}

bool is_float_cpu(const TensorMeta& m) {
  return m.is_tensor && m.plain && m.dtype == c10::kFloat && m.device.is_cpu();
}

}  // namespace

// Binds every fx_inference.conv2d oneDNN can run as planned (float32 CPU
// values, attribute weights); returns whether any was.
bool InferencePlan::Program::bind_convs() {
  bool any = false;
  for (Step& step : steps) any = bind_conv(step) || any;
  return any;
}

bool InferencePlan::Program::bind_conv(Step& step) {
  if (step.kind != Step::Kind::kCallOp || step.op->target != kFusedConv ||
      step.params.size() != 11) {
    return false;
  }
  const std::vector<Source>& p = step.params;
  FusedConvParams params;
  if (!conv_params(p, &params)) return false;
  auto attribute = [&](size_t i) -> const at::Tensor* {
    if (p[i].kind != Source::Kind::kSlot) return nullptr;
    const Step& producer = steps[p[i].slot];
    if (producer.kind != Step::Kind::kConstant ||
        !producer.constant.isTensor()) {
      return nullptr;
    }
    return &producer.constant.toTensor();
  };
  const at::Tensor* weight = attribute(1);
  const at::Tensor* bias = attribute(2);
  const bool no_bias = constant_param(p, 2) && p[2].constant.isNone();
  const bool no_residual = constant_param(p, 7) && p[7].constant.isNone();
  if (weight == nullptr || (bias == nullptr && !no_bias)) return false;
  if (p[0].kind != Source::Kind::kSlot) return false;
  if (!no_residual && p[7].kind != Source::Kind::kSlot) return false;
  const TensorMeta& in = slot_meta[p[0].slot];
  const TensorMeta& out = slot_meta[step.slot];
  if (!is_float_cpu(in) || !is_float_cpu(out)) return false;
  if (!no_residual) {
    const TensorMeta& r = slot_meta[p[7].slot];
    if (!is_float_cpu(r) || r.sizes != out.sizes) return false;
  }
  params.has_residual = !no_residual;
  std::unique_ptr<OnednnConv> conv = choose_onednn_conv(
      *weight, bias ? *bias : at::Tensor(), params, in.sizes);
  if (conv == nullptr || conv->output_sizes() != out.sizes) return false;
  step.conv = std::move(conv);
  step.conv_input = p[0].slot;
  step.conv_residual = no_residual ? -1 : p[7].slot;
  return true;
}

// The convolution on oneDNN into its planned buffer (a fresh channels_last
// tensor when it has none); operands of other sizes or dtypes than planned
// leave the plan as run_direct does.
void InferencePlan::Program::run_conv(Step& step) {
  const c10::IValue& x = slots[step.conv_input];
  const c10::IValue* r =
      step.conv_residual >= 0 ? &slots[step.conv_residual] : nullptr;
  auto fits = [](const c10::IValue& v, const std::vector<int64_t>& sizes) {
    if (!v.isTensor()) return false;
    const at::Tensor& t = v.toTensor();
    return t.defined() && t.scalar_type() == at::kFloat &&
           t.device().is_cpu() && t.layout() == c10::kStrided && !t.is_conj() &&
           !t.is_neg() && t.sizes() == c10::IntArrayRef(sizes);
  };
  if (diverged || !fits(x, step.conv->input_sizes()) ||
      (r != nullptr && !fits(*r, step.conv->output_sizes()))) {
    if (!diverged) {
      ++direct_fallbacks;
      diverged = true;
      stale = true;
    }
    slots[step.slot] = run_kernel(step);
    return;
  }
  at::Tensor out = step.buffer;
  if (!out.defined()) {
    out = at::empty(step.conv->output_sizes(),
                    at::TensorOptions()
                        .dtype(at::kFloat)
                        .memory_format(at::MemoryFormat::ChannelsLast));
  }
  step.conv->run(x.toTensor(), r ? &r->toTensor() : nullptr, out);
  slots[step.slot] = std::move(out);
}

// A conv or other oneDNN step's result buffer (none when its group escapes: a
// fresh tensor each run).
void InferencePlan::Program::place_conv(Step& step, AliasGroups& groups,
                                        const GroupLiveness& live,
                                        BufferPool& pool) {
  const int32_t r = groups.find(step.slot);
  step.out_meta = slot_meta[step.slot];
  step.fresh = live.escapes[r];
  step.direct = true;
  if (step.fresh) return;
  if (step.conv_in_place) {
    const Step& producer = steps[step.conv_residual];
    if (producer.direct && !producer.fresh && producer.buffer.defined() &&
        producer.out_meta.same_layout(step.out_meta)) {
      step.buffer = producer.buffer;
      return;
    }
    step.conv_in_place = false;
  }
  step.buffer = pool.take(step.out_meta, r, &buffer_bytes);
}

// Convolutions whose residual is dead after them write into its buffer (the
// sum post-op accumulates there; no copy): the residual comes from a direct
// step, has the result's layout, is not the convolution's input and neither
// group escapes. Their groups are united so the buffer lives on with the
// result (*live is updated: a chain of residual blocks shares one buffer).
void InferencePlan::Program::residuals_in_place(
    const std::vector<bool>& candidate, AliasGroups& groups,
    GroupLiveness* live_groups) {
  const GroupLiveness& live = *live_groups;
  for (size_t i = 0; i < steps.size(); ++i) {
    Step& step = steps[i];
    if (!step.conv || step.conv_residual < 0) continue;
    const int32_t res = groups.find(step.conv_residual);
    const int32_t self = groups.find(step.slot);
    if (!candidate[step.conv_residual] || live.last[res] != i ||
        live.escapes[res] || live.escapes[self] || res == self ||
        res == groups.find(step.conv_input) ||
        !slot_meta[step.conv_residual].same_layout(slot_meta[step.slot])) {
      continue;
    }
    groups.unite(step.slot, step.conv_residual);
    step.conv_in_place = true;
    *live_groups = group_liveness(groups);
  }
}

// ------------------------------------------- other oneDNN steps (linears)

// Binds every fx_inference.linear / matmul oneDNN can run as planned
// (plan/onednn_steps.h).
void InferencePlan::Program::bind_onednn_steps() {
  for (Step& step : steps) {
    if (step.kind != Step::Kind::kCallOp || step.slot < 0) continue;
    std::vector<PlannedParam> params;
    for (const Source& s : step.params) params.push_back(planned_param(s));
    Source result;
    result.kind = Source::Kind::kSlot;
    result.slot = step.slot;
    step.onednn =
        bind_onednn_step(step.op->target, params, planned_param(result));
  }
}

// What the planner knows of one parameter.
PlannedParam InferencePlan::Program::planned_param(const Source& s) const {
  PlannedParam p;
  if (s.kind == Source::Kind::kConstant) {
    p.kind = PlannedParam::Kind::kConstant;
    p.constant = s.constant;
  } else if (s.kind == Source::Kind::kSlot &&
             steps[s.slot].kind == Step::Kind::kConstant) {
    const c10::IValue& c = steps[s.slot].constant;
    if (c.isTensor()) {
      p.kind = PlannedParam::Kind::kAttribute;
      p.attribute = &c.toTensor();
    }
  } else if (s.kind == Source::Kind::kSlot) {
    const TensorMeta& m = slot_meta[s.slot];
    p.kind = PlannedParam::Kind::kValue;
    p.slot = s.slot;
    p.float_cpu = is_float_cpu(m);
    p.sizes = m.sizes;
    p.strides = m.strides;
  }
  return p;
}

// The step on oneDNN into its planned buffer (a fresh contiguous tensor
// when it has none); operands of other layouts than planned leave the plan
// as run_direct does.
void InferencePlan::Program::run_onednn(Step& step) {
  std::vector<const at::Tensor*> operands;
  for (int32_t slot : step.onednn->inputs()) {
    operands.push_back(slots[slot].isTensor() ? &slots[slot].toTensor()
                                              : nullptr);
  }
  if (diverged || !step.onednn->fits(operands)) {
    if (!diverged) {
      ++direct_fallbacks;
      diverged = true;
      stale = true;
    }
    slots[step.slot] = run_kernel(step);
    return;
  }
  at::Tensor out = step.buffer;
  if (!out.defined()) out = at::empty(step.onednn->output_sizes(), at::kFloat);
  step.onednn->run(operands, out);
  slots[step.slot] = std::move(out);
}

// Whether `step` maps to a direct kernel; sets direct_op, s1, s2,
// num_operands and out_meta (tensor operands come first; numbers are
// wrapped).
bool InferencePlan::Program::bind_direct(Step& step) {
  if (step.kind != Step::Kind::kCallOp) return false;
  std::optional<DirectMatch> match = match_target(*step.op);
  if (!match) return false;
  step.direct_op = match->op;
  if (match->op == DirectOp::kPointwise) return bind_pointwise(step);
  if (!bind_scalars(step.op->target, step.params, &step.direct_op, &step.s1,
                    &step.s2)) {
    return false;
  }
  if (step.params.size() < match->num_operands) return false;
  if (!result_fits(step.direct_op, slot_meta[step.slot])) return false;
  if (!operands_fit(step, match->num_operands)) return false;
  step.num_operands = match->num_operands;
  step.out_meta = slot_meta[step.slot];
  return true;
}

// fx_inference.pointwise(inputs, program, scalars) with constant program
// and scalars and float32 inputs: its PointwiseKernel.
bool InferencePlan::Program::bind_pointwise(Step& step) {
  const std::vector<Source>& p = step.params;
  if (p.size() != 3 || p[0].kind != Source::Kind::kList ||
      p[1].kind != Source::Kind::kConstant || !p[1].constant.isList() ||
      p[2].kind != Source::Kind::kConstant || !p[2].constant.isList()) {
    return false;
  }
  std::vector<std::string> program;
  for (const c10::IValue& v : p[1].constant.toListRef()) {
    if (!v.isString()) return false;
    program.push_back(v.toStringRef());
  }
  std::vector<double> scalars;
  for (const c10::IValue& v : p[2].constant.toListRef()) {
    if (!v.isDouble() && !v.isInt()) return false;
    scalars.push_back(v.isDouble() ? v.toDouble()
                                   : static_cast<double>(v.toInt()));
  }
  const size_t n = p[0].items.size();
  if (!result_fits(DirectOp::kPointwise, slot_meta[step.slot])) return false;
  for (const Source& s : p[0].items) {
    if (s.kind != Source::Kind::kSlot) return false;
  }
  if (!operands_fit(step, n)) return false;
  step.pointwise = PointwiseKernel::create(program, std::move(scalars), n);
  if (step.pointwise == nullptr) return false;
  step.num_operands = n;
  step.out_meta = slot_meta[step.slot];
  return true;
}

// The tensor operands are plain CPU tensors of the result's dtype; operands
// after the first may also be numbers (not bools).
bool InferencePlan::Program::operands_fit(const Step& step,
                                          size_t num_operands) const {
  const TensorMeta& out = slot_meta[step.slot];
  const bool pointwise = step.direct_op == DirectOp::kPointwise;
  for (size_t i = 0; i < num_operands; ++i) {
    const Source& s = operand_source(step, i, pointwise);
    if (s.kind == Source::Kind::kConstant && i > 0 && is_number(s.constant) &&
        !s.constant.isBool()) {
      continue;
    }
    if (s.kind != Source::Kind::kSlot) return false;
    const TensorMeta& m = slot_meta[s.slot];
    if (!m.is_tensor || !m.plain || m.dtype != out.dtype) return false;
  }
  return true;
}

// The operands of a direct step: numbers wrapped, constants and earlier
// buffers as they are, stand-ins (in scratch memory) for the rest.
void InferencePlan::Program::make_operands(Step& step) {
  step.operands.clear();
  step.variable.clear();
  for (size_t i = 0; i < step.num_operands; ++i) {
    const Source& s = operand_source(step, i, step.pointwise != nullptr);
    if (s.kind == Source::Kind::kConstant) {
      step.operands.push_back(wrap_number(s.constant));
      continue;
    }
    const Step& producer = steps[s.slot];  // slot i is step i's result
    if (producer.kind == Step::Kind::kConstant) {
      step.operands.push_back(producer.constant.toTensor());
    } else if (producer.direct && !producer.fresh) {
      step.operands.push_back(producer.buffer);
    } else {
      step.operands.push_back(stand_in(i, s.slot, step));
    }
  }
}

// A variable operand (re-pointed each run) for operand i, reading `slot`:
// a tensor of the planned layout over scratch memory.
at::Tensor InferencePlan::Program::stand_in(size_t i, int32_t slot,
                                            Step& step) {
  const TensorMeta& m = slot_meta[slot];
  Operand op;
  op.iter_index = static_cast<int>(i + 1);
  op.slot = slot;
  op.meta = m;
  step.variable.push_back(op);
  size_t need = std::max<size_t>(m.nbytes(), 64);
  if (scratch.empty() || static_cast<size_t>(scratch.back().numel()) < need) {
    scratch.push_back(at::empty({static_cast<int64_t>(need)}, at::kByte));
  }
  return at::from_blob(scratch.back().data_ptr(), m.sizes, m.strides,
                       at::TensorOptions().dtype(m.dtype));
}

// ------------------------------------------------------------ InferencePlan

InferencePlan::InferencePlan(GraphModule& gm) : gm_(gm) {}
InferencePlan::~InferencePlan() = default;

namespace {

bool simple_value(const c10::IValue& v) {
  return v.isNone() || v.isInt() || v.isDouble() || v.isBool() || v.isString();
}

}  // namespace

// Compiles and plans for `inputs` (already through process_inputs); the
// planning run's result goes to *out (unless the graph cannot be planned).
std::unique_ptr<InferencePlan::Program> InferencePlan::plan_for(
    std::vector<c10::IValue> inputs, c10::IValue* out) {
  c10::AutoGradMode no_grad(false);
  auto program = std::make_unique<Program>();
  program->compile(gm_.graph(), gm_);
  if (inputs.size() != program->num_inputs) program->plannable = false;
  for (const c10::IValue& v : inputs) {
    program->input_meta.push_back(TensorMeta::of(v));
    const bool tensor = program->input_meta.back().is_tensor;
    if (!tensor && !simple_value(v)) program->plannable = false;
    program->input_sig.push_back(tensor ? c10::IValue() : v);
  }
  if (!program->plannable) return program;
  std::vector<c10::IValue> again = inputs;
  *out = program->execute(std::move(inputs), /*record=*/true);
  // oneDNN convolutions write channels_last: record the layouts they give
  // before planning the rest around them.
  if (program->bind_convs()) {
    *out = program->execute(std::move(again), /*record=*/true);
  }
  program->bind_onednn_steps();  // results in the reference's layout
  program->plan_direct();
  return program;
}

std::unique_ptr<InferencePlan> InferencePlan::build(
    GraphModule& gm, std::vector<c10::IValue> example_inputs) {
  std::unique_ptr<InferencePlan> plan(new InferencePlan(gm));
  c10::IValue out;
  plan->program_ = plan->plan_for(
      process_inputs(gm.graph().codegen(), std::move(example_inputs)), &out);
  return plan;
}

c10::IValue InferencePlan::run(std::vector<c10::IValue> inputs) {
  if (c10::GradMode::is_enabled() || !program_->plannable) {
    ++forward_calls_;
    return gm_.forward(std::move(inputs));
  }
  const CodeGen& codegen = gm_.graph().codegen();
  std::vector<c10::IValue> in = process_inputs(codegen, inputs);
  if (program_->stale || !program_->matches(in)) {
    // Re-plan for these inputs: the planning run computes the result.
    c10::IValue out;
    direct_fallbacks_ += program_->direct_fallbacks;
    program_ = plan_for(std::move(in), &out);
    ++replans_;
    if (!program_->plannable) {
      ++forward_calls_;
      return gm_.forward(std::move(inputs));
    }
    return process_outputs(codegen, std::move(out));
  }
  return process_outputs(codegen, program_->execute(std::move(in), false));
}

InferencePlan::Stats InferencePlan::stats() const {
  Stats s;
  for (const Program::Step& step : program_->steps) {
    ++s.steps;
    if (step.conv || step.onednn) ++s.onednn_steps;
    if (step.conv && step.conv->algorithm() == ConvAlgorithm::kWinograd) {
      ++s.winograd_steps;
    }
    if (step.conv_in_place) ++s.residuals_in_place;
    if (step.pointwise) ++s.pointwise_steps;
    if (step.in_place) ++s.in_place_steps;
    if (step.direct) {
      ++s.direct_steps;
      if (step.fresh) ++s.fresh_outputs;
    } else if (step.is_call()) {
      ++s.fallback_steps;
    }
  }
  s.buffers = program_->buffers.size();
  s.buffer_bytes = program_->buffer_bytes;
  s.replans = replans_;
  s.forward_calls = forward_calls_;
  s.direct_fallbacks = direct_fallbacks_ + program_->direct_fallbacks;
  return s;
}

std::vector<std::string> InferencePlan::direct_nodes() const {
  std::vector<std::string> names;
  for (const Program::Step& step : program_->steps) {
    if (step.direct) names.emplace_back(step.node->name());
  }
  return names;
}

}  // namespace fx
