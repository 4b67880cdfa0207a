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
#include <functional>
#include <initializer_list>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/module_path.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/runtime/plan/value_source.h"
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

}  // namespace

struct InferencePlan::Program {
  struct Operand {
    int iter_index = 0;  // operand index in the TensorIterator
    int32_t slot = -1;
    TensorMeta meta;
  };
  struct Step {
    enum class Kind : uint8_t {
      kPlaceholder,
      kConstant,
      kCallOp,
      kCallModule,
      kOutput
    };
    Kind kind = Kind::kConstant;
    int32_t slot = -1;
    const Node* node = nullptr;
    size_t input_index = 0;
    c10::IValue constant;
    const OpDef* op = nullptr;
    torch::nn::Module* module = nullptr;
    const ModuleKind* module_kind = nullptr;
    const OpSchema* schema = nullptr;
    std::vector<Source> params;
    std::vector<int32_t> release;
    // Direct binding.
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
  };

  std::vector<Step> steps;
  size_t num_slots = 0;
  size_t max_params = 0;
  size_t num_inputs = 0;
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
  void plan_direct();
  bool bind_direct(Step& step);
  bool matches(const std::vector<c10::IValue>& inputs) const;
  void run_direct(Step& step);
  c10::IValue run_kernel(Step& step);
  void make_operands(Step& step);
};

void InferencePlan::Program::compile(const Graph& graph,
                                     torch::nn::Module& root) {
  absl::flat_hash_map<const Node*, int32_t> slot_of;
  absl::flat_hash_map<const Node*, size_t> step_of;
  auto fail = [](const Node* n, std::string_view what) -> FxError {
    return FxError(cat("cannot compile node '", n->name(), "' (",
                       opcode_name(n->op()), " ", n->target(), "): ", what));
  };
  auto source_of = [&slot_of](const Argument& arg) {
    return fx::source_of(arg, slot_of);
  };
  auto bind = [&](const Node* n, const OpSchema& schema,
                  std::string_view callee) {
    std::vector<Source> params;
    std::string error;
    if (!bind_sources(schema, n->args(), n->kwargs(), slot_of, &params,
                      &error)) {
      throw fail(n, cat(callee, "() ", error));
    }
    return params;
  };

  for (Node* n : graph.nodes()) {
    Step step;
    step.node = n;
    try {
      switch (n->op()) {
        case Opcode::kPlaceholder:
          step.kind = Step::Kind::kPlaceholder;
          step.input_index = num_inputs++;
          // `*args` and defaults: planned only when given explicitly.
          if ((!n->target().empty() && n->target()[0] == '*') ||
              !n->args().empty()) {
            plannable = false;
          }
          break;
        case Opcode::kGetAttr: {
          step.kind = Step::Kind::kConstant;
          std::optional<TensorAttr> found = tensor_at(root, n->target());
          if (!found) {
            throw fail(n, cat("the module has no parameter or buffer '",
                              n->target(), "'"));
          }
          step.constant = found->tensor;
          break;
        }
        case Opcode::kCallFunction:
        case Opcode::kCallMethod:
          step.kind = Step::Kind::kCallOp;
          step.op = OpRegistry::global().resolve(n->op(), n->target());
          if (step.op == nullptr) {
            throw fail(n, cat("no kernel for ", opcode_name(n->op()),
                              " target '", n->target(), "'"));
          }
          step.schema = &step.op->schema;
          step.params = bind(n, *step.schema, step.op->target);
          break;
        case Opcode::kCallModule:
          step.kind = Step::Kind::kCallModule;
          step.module = module_at(root, n->target());
          if (step.module == nullptr) {
            throw fail(n,
                       cat("the module has no submodule '", n->target(), "'"));
          }
          step.module_kind = ModuleRegistry::global().find(*step.module);
          if (step.module_kind == nullptr) {
            throw fail(n, cat("module class ", step.module->name(),
                              " cannot be called"));
          }
          step.schema = &step.module_kind->forward_schema;
          step.params = bind(n, *step.schema, cat(n->target(), ".forward"));
          break;
        case Opcode::kOutput:
          step.kind = Step::Kind::kOutput;
          if (n->args().size() != 1) {
            throw fail(n, "the output node must have exactly one argument");
          }
          step.params.push_back(source_of(n->args()[0]));
          break;
      }
    } catch (const FxError&) {
      throw;
    } catch (const std::exception& e) {
      throw fail(n, e.what());
    }
    if (n->op() != Opcode::kOutput) {
      step.slot = static_cast<int32_t>(num_slots++);
      slot_of[n] = step.slot;
    }
    max_params = std::max(max_params, step.params.size());
    step_of[n] = steps.size();
    steps.push_back(std::move(step));
  }
  for (Node* n : graph.nodes()) {
    if (n->op() == Opcode::kOutput) continue;
    size_t last = step_of.at(n);
    for (Node* user : n->users()) last = std::max(last, step_of.at(user));
    steps[last].release.push_back(slot_of.at(n));
  }
  slots.assign(num_slots, c10::IValue());
  buffer_args.assign(max_params, c10::IValue());
}

c10::IValue InferencePlan::Program::run_kernel(Step& step) {
  for (size_t i = 0; i < step.params.size(); ++i) {
    const Source& s = step.params[i];
    buffer_args[i] =
        s.kind == Source::Kind::kSlot ? slots[s.slot] : s.get(slots);
  }
  OpArgs args(*step.schema, buffer_args.data());
  c10::IValue result = step.kind == Step::Kind::kCallOp
                           ? step.op->kernel(args)
                           : step.module_kind->forward(*step.module, args);
  for (size_t i = 0; i < step.params.size(); ++i) buffer_args[i] = {};
  return result;
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
  switch (step.direct_op) {
    case DirectOp::kAdd:
      at::native::add_stub(c10::kCPU, it, step.s1);
      break;
    case DirectOp::kSub:
      at::native::add_stub(c10::kCPU, it, -step.s1);
      break;
    case DirectOp::kMul:
      at::native::mul_stub(c10::kCPU, it);
      break;
    case DirectOp::kDiv:
      at::native::div_true_stub(c10::kCPU, it);
      break;
    case DirectOp::kClampMin:
      at::native::clamp_min_scalar_stub(c10::kCPU, it, step.s1);
      break;
    case DirectOp::kClampMax:
      at::native::clamp_max_scalar_stub(c10::kCPU, it, step.s2);
      break;
    case DirectOp::kClamp:
      at::native::clamp_scalar_stub(c10::kCPU, it, step.s1, step.s2);
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
  }
  slots[step.slot] = std::move(out);
}

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
          if (step.direct) {
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
      const char* what = e.what();
      if (auto* c10e = dynamic_cast<const c10::Error*>(&e)) {
        what = c10e->what_without_backtrace();
      }
      throw FxError(cat("while running node '", step.node->name(), "' (",
                        opcode_name(step.node->op()), " ", step.node->target(),
                        "): ", what));
    }
    if (record && step.slot >= 0) {
      slot_meta[step.slot] = TensorMeta::of(slots[step.slot]);
    }
    for (int32_t slot : step.release) slots[slot] = c10::IValue();
  }
  return c10::IValue();
}

// Whether `step` maps to a direct kernel; sets direct_op, s1, s2 and the
// operand sources (tensor operands first; numbers are wrapped).
bool InferencePlan::Program::bind_direct(Step& step) {
  if (step.kind != Step::Kind::kCallOp) return false;
  const std::string& t = step.op->target;
  const bool method = step.op->op == Opcode::kCallMethod;
  auto is = [&](std::initializer_list<const char*> functions,
                const char* method_name) {
    if (method) return method_name != nullptr && t == method_name;
    for (const char* f : functions) {
      if (t == f) return true;
    }
    return false;
  };
  const auto& p = step.params;
  auto constant = [&](size_t i) -> const c10::IValue* {
    return i < p.size() && p[i].kind == Source::Kind::kConstant ? &p[i].constant
                                                                : nullptr;
  };
  size_t num_operands = 0;
  if (is({"operator.add", "torch.add"}, "add")) {
    step.direct_op = DirectOp::kAdd;
    num_operands = 2;
  } else if (is({"operator.sub", "torch.sub"}, "sub")) {
    step.direct_op = DirectOp::kSub;
    num_operands = 2;
  } else if (is({"operator.mul", "torch.mul"}, "mul")) {
    step.direct_op = DirectOp::kMul;
    num_operands = 2;
  } else if (is({"operator.truediv", "torch.div"}, "div")) {
    step.direct_op = DirectOp::kDiv;
    num_operands = 2;
    if (t != "operator.truediv") {
      const c10::IValue* mode = constant(2);
      if (mode == nullptr || !mode->isNone()) return false;
    }
  } else if (is({"torch.relu", "torch.nn.functional.relu"}, "relu")) {
    step.direct_op = DirectOp::kClampMin;
    step.s1 = c10::Scalar(int64_t{0});
    num_operands = 1;
    if (t == "torch.nn.functional.relu") {
      const c10::IValue* inplace = constant(1);
      if (inplace == nullptr || !inplace->isBool() || inplace->toBool()) {
        return false;
      }
    }
  } else if (is({"torch.clamp"}, "clamp")) {
    num_operands = 1;
    const c10::IValue* lo = constant(1);
    const c10::IValue* hi = constant(2);
    if (lo == nullptr || hi == nullptr) return false;
    if (!(lo->isNone() || is_number(*lo)) || !(hi->isNone() || is_number(*hi)))
      return false;
    if (lo->isNone() && hi->isNone()) return false;
    if (!lo->isNone()) step.s1 = to_scalar(*lo);
    if (!hi->isNone()) step.s2 = to_scalar(*hi);
    for (const c10::IValue* b : {lo, hi}) {
      if (b->isDouble() && std::isnan(b->toDouble())) return false;
    }
    step.direct_op = lo->isNone()   ? DirectOp::kClampMax
                     : hi->isNone() ? DirectOp::kClampMin
                                    : DirectOp::kClamp;
  } else if (is({"torch.sigmoid"}, "sigmoid")) {
    step.direct_op = DirectOp::kSigmoid;
    num_operands = 1;
  } else if (is({"torch.tanh"}, "tanh")) {
    step.direct_op = DirectOp::kTanh;
    num_operands = 1;
  } else if (is({"torch.neg", "operator.neg"}, "neg")) {
    step.direct_op = DirectOp::kNeg;
    num_operands = 1;
  } else {
    return false;
  }
  // add/sub: alpha (parameter 2 of torch.add / Tensor.add) must be a number.
  if ((step.direct_op == DirectOp::kAdd || step.direct_op == DirectOp::kSub)) {
    step.s1 = c10::Scalar(int64_t{1});
    if (t != "operator.add" && t != "operator.sub") {
      const c10::IValue* alpha = constant(2);
      if (alpha == nullptr || !is_number(*alpha)) return false;
      step.s1 = to_scalar(*alpha);
    }
  }
  if (p.size() < num_operands) return false;

  // The result and the tensor operands: plain CPU tensors of one dtype.
  const TensorMeta& out = slot_meta[step.slot];
  if (!out.is_tensor || !out.plain) return false;
  const bool float_op = step.direct_op == DirectOp::kDiv ||
                        step.direct_op == DirectOp::kSigmoid ||
                        step.direct_op == DirectOp::kTanh;
  if (float_op && !c10::isFloatingType(out.dtype)) return false;
  if (out.dtype == c10::kBool &&
      (step.direct_op != DirectOp::kAdd && step.direct_op != DirectOp::kMul)) {
    return false;
  }
  if (c10::isComplexType(out.dtype)) return false;

  for (size_t i = 0; i < num_operands; ++i) {
    const Source& s = p[i];
    if (s.kind == Source::Kind::kConstant && i > 0 && is_number(s.constant) &&
        !s.constant.isBool()) {
      continue;
    }
    if (s.kind != Source::Kind::kSlot) return false;
    const TensorMeta& m = slot_meta[s.slot];
    if (!m.is_tensor || !m.plain || m.dtype != out.dtype) return false;
  }
  step.num_operands = num_operands;
  step.out_meta = out;
  return true;
}

// The operands of a direct step: numbers wrapped, constants and earlier
// buffers as they are, stand-ins (in scratch memory) for the rest.
void InferencePlan::Program::make_operands(Step& step) {
  step.operands.clear();
  step.variable.clear();
  for (size_t i = 0; i < step.num_operands; ++i) {
    const Source& s = step.params[i];
    if (s.kind == Source::Kind::kConstant) {
      step.operands.push_back(wrap_number(s.constant));
      continue;
    }
    const Step& producer = steps[s.slot];  // slot i is step i's result
    if (producer.kind == Step::Kind::kConstant) {
      step.operands.push_back(producer.constant.toTensor());
      continue;
    }
    if (producer.direct && !producer.fresh) {
      step.operands.push_back(producer.buffer);
      continue;
    }
    const TensorMeta& m = slot_meta[s.slot];
    Operand op;
    op.iter_index = static_cast<int>(i + 1);
    op.slot = s.slot;
    op.meta = m;
    step.variable.push_back(op);
    size_t need = std::max<size_t>(m.nbytes(), 64);
    if (scratch.empty() || static_cast<size_t>(scratch.back().numel()) < need) {
      scratch.push_back(at::empty({static_cast<int64_t>(need)}, at::kByte));
    }
    step.operands.push_back(at::from_blob(scratch.back().data_ptr(), m.sizes,
                                          m.strides,
                                          at::TensorOptions().dtype(m.dtype)));
  }
}

void InferencePlan::Program::plan_direct() {
  // Candidates first (operands may come from earlier candidates' buffers,
  // decided in graph order below).
  // Alias groups: a non-direct node's result may alias its tensor arguments.
  std::vector<int32_t> parent(num_slots);
  for (size_t i = 0; i < num_slots; ++i) parent[i] = static_cast<int32_t>(i);
  std::function<int32_t(int32_t)> find = [&](int32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  auto unite = [&](int32_t a, int32_t b) { parent[find(a)] = find(b); };

  std::vector<bool> candidate(steps.size(), false);
  for (size_t i = 0; i < steps.size(); ++i) {
    Step& step = steps[i];
    candidate[i] = bind_direct(step);
    if (!candidate[i] && (step.kind == Step::Kind::kCallOp ||
                          step.kind == Step::Kind::kCallModule)) {
      for (const Source& s : step.params) {
        s.for_each_slot([&](int32_t slot) { unite(step.slot, slot); });
      }
    }
  }
  // Last use of each slot, per group; groups reaching the output escape.
  std::vector<size_t> last_use(num_slots, 0);
  std::vector<bool> escapes(num_slots, false);
  for (size_t i = 0; i < steps.size(); ++i) {
    Step& step = steps[i];
    if (step.slot >= 0) last_use[step.slot] = std::max(last_use[step.slot], i);
    for (const Source& s : step.params) {
      s.for_each_slot([&](int32_t slot) {
        last_use[slot] = std::max(last_use[slot], i);
        if (step.kind == Step::Kind::kOutput) escapes[slot] = true;
      });
    }
  }
  std::vector<size_t> group_last(num_slots, 0);
  std::vector<bool> group_escapes(num_slots, false);
  for (size_t s = 0; s < num_slots; ++s) {
    int32_t r = find(static_cast<int32_t>(s));
    group_last[r] = std::max(group_last[r], last_use[s]);
    if (escapes[s]) group_escapes[r] = true;
  }

  // Buffers: a free list per layout; a group's buffers are freed after its
  // last use.
  struct Buffer {
    TensorMeta meta;
    at::Tensor tensor;
  };
  std::vector<Buffer> pool;       // all buffers
  std::vector<size_t> free_list;  // indices into pool
  std::vector<std::vector<size_t>> group_buffers(num_slots);
  std::vector<std::vector<int32_t>> groups_ending(steps.size());
  for (size_t s = 0; s < num_slots; ++s) {
    if (find(static_cast<int32_t>(s)) == static_cast<int32_t>(s) &&
        !group_escapes[s]) {
      groups_ending[group_last[s]].push_back(static_cast<int32_t>(s));
    }
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    Step& step = steps[i];
    if (candidate[i]) {
      int32_t r = find(step.slot);
      step.fresh = group_escapes[r];
      at::Tensor out;
      if (step.fresh) {
        out = at::empty_strided(step.out_meta.sizes, step.out_meta.strides,
                                at::TensorOptions().dtype(step.out_meta.dtype));
      } else {
        auto it = std::find_if(
            free_list.begin(), free_list.end(),
            [&](size_t b) { return pool[b].meta.same_layout(step.out_meta); });
        size_t b;
        if (it != free_list.end()) {
          b = *it;
          free_list.erase(it);
        } else {
          b = pool.size();
          pool.push_back({step.out_meta,
                          at::empty_strided(
                              step.out_meta.sizes, step.out_meta.strides,
                              at::TensorOptions().dtype(step.out_meta.dtype))});
          buffer_bytes += step.out_meta.nbytes();
        }
        group_buffers[r].push_back(b);
        out = pool[b].tensor;
        step.buffer = out;
      }
      make_operands(step);
      bool ok = true;
      try {
        const auto& ops = step.operands;
        auto make = [&]() {
          switch (step.direct_op) {
            case DirectOp::kAdd:
            case DirectOp::kSub:
            case DirectOp::kMul:
              return at::TensorIterator::binary_op(out, ops[0], ops[1]);
            case DirectOp::kDiv:
              return at::TensorIterator::binary_float_op(out, ops[0], ops[1]);
            case DirectOp::kSigmoid:
            case DirectOp::kTanh:
              return at::TensorIterator::unary_float_op(out, ops[0]);
            default:
              return at::TensorIterator::unary_op(out, ops[0]);
          }
        };
        at::TensorIterator it = make();
        // No operand replaced by a cast copy, nothing resized.
        ok = it.noutputs() == 1 &&
             it.ntensors() == static_cast<int>(1 + ops.size()) &&
             it.output_base(0).is_same(out);
        for (size_t j = 0; ok && j < ops.size(); ++j) {
          if (ops[j].unsafeGetTensorImpl()->is_wrapped_number()) continue;
          ok = it.input_base(static_cast<int>(j)).is_same(ops[j]);
        }
        if (ok) step.iter.emplace(std::move(it));
      } catch (const c10::Error&) {
        ok = false;
      }
      if (!ok) {
        // Not bound after all: its result may alias its arguments. Its
        // group keeps the buffer taken above until the group's end.
        candidate[i] = false;
        step.variable.clear();
        step.operands.clear();
        step.buffer = at::Tensor();
      } else {
        step.direct = true;
        if (step.fresh) step.buffer = at::Tensor();
      }
    }
    for (int32_t r : groups_ending[i]) {
      for (size_t b : group_buffers[r]) free_list.push_back(b);
    }
  }
  for (Buffer& b : pool) buffers.push_back(b.tensor);
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
  *out = program->execute(std::move(inputs), /*record=*/true);
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
    if (step.direct) {
      ++s.direct_steps;
      if (step.fresh) ++s.fresh_outputs;
    } else if (step.kind == Program::Step::Kind::kCallOp ||
               step.kind == Program::Step::Kind::kCallModule) {
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
