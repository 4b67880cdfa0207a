#include "fx_core/runtime/meta_execution.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <torch/nn/modules/conv.h>

#include <algorithm>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/interpreter.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

// ------------------------------------------- ops without a meta kernel

// The keys of the ops that failed on meta tensors, process-wide.
class MissingMetaKernels {
 public:
  static MissingMetaKernels& global() {
    static auto* missing = new MissingMetaKernels();
    return *missing;
  }
  bool contains(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    return keys_.contains(key);
  }
  void insert(std::string key) {
    std::lock_guard<std::mutex> lock(mutex_);
    keys_.insert(std::move(key));
  }
  std::vector<std::string> sorted() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> out(keys_.begin(), keys_.end());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::mutex mutex_;
  absl::flat_hash_set<std::string> keys_;
};

// ------------------------------------------------ meta <-> CPU tensors

// `v` with each tensor t (also inside lists and tuples) replaced by fn(t).
c10::IValue map_each_tensor(
    const c10::IValue& v,
    const std::function<at::Tensor(const at::Tensor&)>& fn) {
  if (v.isTensor()) return fn(v.toTensor());
  if (v.isTensorList()) {
    std::vector<at::Tensor> out;
    for (const at::Tensor& t : v.toTensorVector()) out.push_back(fn(t));
    return out;
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> items;
    for (const c10::IValue& e : v.toTupleRef().elements()) {
      items.push_back(map_each_tensor(e, fn));
    }
    return tuple_like(v, std::move(items));
  }
  if (v.isList() && !v.isIntList() && !v.isDoubleList() && !v.isBoolList()) {
    c10::impl::GenericList out(c10::AnyType::get());
    for (const c10::IValue& e : v.toListRef()) {
      out.push_back(map_each_tensor(e, fn));
    }
    return out;
  }
  return v;
}

// `v` with its tensors replaced by uninitialised meta (to_meta) or CPU
// tensors of the same sizes, strides and dtype (tensors already on that
// device are kept). CPU tensors of integral or bool dtype are zeros, not
// garbage: they may be indices (x[idx], embedding, gather), and 0 is in
// range of every dimension that is not empty.
c10::IValue map_tensors(const c10::IValue& v, bool to_meta) {
  return map_each_tensor(v, [to_meta](const at::Tensor& t) {
    if (to_meta == t.is_meta() || !t.defined()) return t;
    at::TensorOptions options =
        t.options().device(to_meta ? at::kMeta : at::kCPU);
    at::Tensor out = at::empty_strided(t.sizes(), t.strides(), options);
    if (!to_meta && at::isIntegralType(t.scalar_type(), /*includeBool=*/true)) {
      out.zero_();
    }
    return out;
  });
}

// Whether a tensor in `v` requires grad.
bool any_requires_grad(const c10::IValue& v) {
  bool found = false;
  map_each_tensor(v, [&found](const at::Tensor& t) {
    found |= t.defined() && t.requires_grad();
    return t;
  });
  return found;
}

// `v` with each floating point or complex tensor requiring grad as an op's
// result does (not a leaf, so in-place ops on it stay legal).
c10::IValue requiring_grad(const c10::IValue& v) {
  return map_each_tensor(v, [](const at::Tensor& t) {
    if (!t.defined() || t.requires_grad() ||
        !(t.is_floating_point() || t.is_complex())) {
      return t;
    }
    return t.detach().requires_grad_(true).clone();
  });
}

// ----------------------------------------------------------- shape rules

// Ops whose result has their first argument's shape, dtype and layout.
bool keeps_input_shape(const std::string& key) {
  static const auto* keys = new absl::flat_hash_set<std::string>{
      "call_function:torch.relu",
      "call_function:torch.nn.functional.relu",
      "call_method:relu",
      "call_function:torch.nn.functional.hardswish",
      "call_function:torch.nn.functional.hardtanh",
      "call_function:torch.nn.functional.relu6",
      "call_function:torch.nn.functional.batch_norm",
      "call_function:torch.nn.functional.layer_norm",
      "call_module:torch.nn.ReLU",
      "call_module:torch.nn.ReLU6",
      "call_module:torch.nn.Hardswish",
      "call_module:torch.nn.Hardtanh",
      "call_module:torch.nn.BatchNorm1d",
      "call_module:torch.nn.BatchNorm2d",
      "call_module:torch.nn.BatchNorm3d",
      "call_module:torch.nn.LayerNorm",
  };
  return keys->contains(key);
}

bool is_conv_module(const std::string& key) {
  return key == "call_module:torch.nn.Conv1d" ||
         key == "call_module:torch.nn.Conv2d" ||
         key == "call_module:torch.nn.Conv3d";
}

// The output of a D-dimensional convolution module on `x` (meta).
template <size_t D, typename Conv>
std::optional<c10::IValue> conv_shape(const at::Tensor& x, const Conv& conv) {
  const auto& o = conv.options;
  const int64_t spatial0 = x.dim() - static_cast<int64_t>(D);
  if (spatial0 < 1) return std::nullopt;
  std::vector<int64_t> out(x.sizes().begin(), x.sizes().begin() + spatial0);
  out.back() = conv.weight.size(0);
  for (size_t d = 0; d < D; ++d) {
    int64_t in = x.size(spatial0 + d);
    int64_t k = conv.weight.size(2 + d);
    int64_t s = (*o.stride())[d], dil = (*o.dilation())[d];
    int64_t p = 0;
    if (const auto* pad = c10::get_if<torch::ExpandingArray<D>>(&o.padding())) {
      p = (**pad)[d];
    } else if (c10::get_if<torch::enumtype::kSame>(&o.padding())) {
      out.push_back(in);  // 'same' (stride 1)
      continue;
    }
    out.push_back((in + 2 * p - dil * (k - 1) - 1) / s + 1);
  }
  return c10::IValue(at::empty(out, x.options()));
}

std::optional<c10::IValue> conv_module_shape(const at::Tensor& x,
                                             torch::nn::Module* m) {
  if (auto* c = dynamic_cast<torch::nn::Conv1dImpl*>(m)) {
    return conv_shape<1>(x, *c);
  }
  if (auto* c = dynamic_cast<torch::nn::Conv2dImpl*>(m)) {
    return conv_shape<2>(x, *c);
  }
  if (auto* c = dynamic_cast<torch::nn::Conv3dImpl*>(m)) {
    return conv_shape<3>(x, *c);
  }
  return std::nullopt;
}

// --------------------------------------------------------- the interpreters

// Thrown through Interpreter::run (which wraps std::exceptions with the
// node's name) to carry the callback's own exception out unchanged.
struct CallbackException {
  std::exception_ptr error;
};

// Runs the module and reports every node's value; on meta inputs, computes
// call nodes as the header describes.
class ReportingInterpreter : public Interpreter {
 public:
  ReportingInterpreter(GraphModule& gm, ExecutionMode mode,
                       const NodeValueFn& on_node)
      : Interpreter(gm, /*garbage_collect_values=*/true),
        meta_(mode == ExecutionMode::kMeta),
        on_node_(&on_node) {}

  c10::IValue run_node(const Node& n) override {
    c10::IValue v = compute(n);
    if (*on_node_) {
      try {
        (*on_node_)(n, v);
      } catch (...) {
        throw CallbackException{std::current_exception()};
      }
    }
    return v;
  }

 private:
  c10::IValue compute(const Node& n) {
    if (!meta_ || n.op() == Opcode::kPlaceholder || n.op() == Opcode::kOutput ||
        n.op() == Opcode::kGetAttr) {
      return Interpreter::run_node(n);
    }
    std::string key = meta_key(n);
    if (std::optional<c10::IValue> shaped = shape_rule(n, key)) {
      return with_grad_of_inputs(n, *std::move(shaped));
    }
    MissingMetaKernels& missing = MissingMetaKernels::global();
    if (missing.contains(key)) return with_grad_of_inputs(n, run_on_cpu(n));
    try {
      return Interpreter::run_node(n);
    } catch (const std::exception&) {
      c10::IValue v = run_on_cpu(n);
      missing.insert(std::move(key));  // only once the CPU run has worked
      return with_grad_of_inputs(n, std::move(v));
    }
  }

  // A result of steps 1 and 3 (which autograd did not see) under grad
  // mode: requiring grad when an input or a called module's parameter does,
  // as a differentiable op's result would.
  c10::IValue with_grad_of_inputs(const Node& n, c10::IValue v) const {
    if (!c10::GradMode::is_enabled()) return v;
    bool inputs_require_grad = false;
    for (const Node* input : n.all_input_nodes()) {
      auto it = env_.find(input);
      if (it != env_.end())
        inputs_require_grad |= any_requires_grad(it->second);
    }
    if (n.op() == Opcode::kCallModule) {
      if (auto m = module_.get_submodule(n.target())) {
        for (const at::Tensor& p : m->parameters()) {
          inputs_require_grad |= p.requires_grad();
        }
      }
    }
    return inputs_require_grad ? requiring_grad(v) : v;
  }

  // Step 1 of the header's list; std::nullopt when no rule applies.
  std::optional<c10::IValue> shape_rule(const Node& n,
                                        const std::string& key) const {
    bool conv = is_conv_module(key);
    if (!conv && !keeps_input_shape(key)) return std::nullopt;
    if (n.args().empty() || !n.args()[0].is_node()) return std::nullopt;
    auto it = env_.find(n.args()[0].as_node());
    if (it == env_.end() || !it->second.isTensor()) return std::nullopt;
    const at::Tensor& x = it->second.toTensor();
    if (!x.is_meta()) return std::nullopt;
    if (!conv) return c10::IValue(at::empty_like(x));
    return conv_module_shape(x, module_.get_submodule(n.target()).get());
  }

  // What decides whether a node has a meta kernel: its target, or for a
  // module call the module's type.
  std::string meta_key(const Node& n) const {
    if (n.op() == Opcode::kCallModule) {
      std::shared_ptr<torch::nn::Module> m = module_.get_submodule(n.target());
      const ModuleKind* kind = m ? ModuleRegistry::global().find(*m) : nullptr;
      return cat("call_module:", kind ? kind->type : n.target());
    }
    return cat(opcode_name(n.op()), ":", n.target());
  }

  // Step 3 of the header's list.
  c10::IValue run_on_cpu(const Node& n) {
    auto [args, kwargs] = fetch_args_kwargs_from_env(n);
    for (c10::IValue& a : args) a = map_tensors(a, /*to_meta=*/false);
    for (auto& kv : kwargs) kv.second = map_tensors(kv.second, false);
    c10::IValue out;
    switch (n.op()) {
      case Opcode::kCallFunction:
        out = call_function(n, std::move(args), kwargs);
        break;
      case Opcode::kCallMethod:
        out = call_method(n, std::move(args), kwargs);
        break;
      default:
        out = call_module(n, std::move(args), kwargs);
        break;
    }
    return map_tensors(out, /*to_meta=*/true);
  }

  bool meta_;
  const NodeValueFn* on_node_;  // borrowed for the run
};

// Evaluates the nodes a target node depends on, from attributes alone.
class ConstantEvaluator : public Interpreter {
 public:
  explicit ConstantEvaluator(GraphModule& gm)
      : Interpreter(gm, /*garbage_collect_values=*/false) {}

  c10::IValue evaluate(const Node& target) {
    absl::flat_hash_set<const Node*> needed = dependencies(target);
    if (target.graph() != &module_.graph()) {
      throw FxError(cat("node '", target.name(),
                        "' is not a node of this module's graph"));
    }
    for (const Node* n : module_.graph().nodes()) {
      if (needed.contains(n)) env_[n] = run_node(*n);
      if (n == &target) break;
    }
    return env_[&target];
  }

 private:
  // `target` and every node it depends on; throws when one is a placeholder.
  static absl::flat_hash_set<const Node*> dependencies(const Node& target) {
    absl::flat_hash_set<const Node*> needed;
    std::vector<const Node*> todo{&target};
    while (!todo.empty()) {
      const Node* n = todo.back();
      todo.pop_back();
      if (!needed.insert(n).second) continue;
      if (n->op() == Opcode::kPlaceholder) {
        throw FxError(cat("node '", target.name(), "' depends on placeholder '",
                          n->name(), "', so it is not a constant"));
      }
      for (const Node* input : n->all_input_nodes()) todo.push_back(input);
    }
    return needed;
  }
};

}  // namespace

c10::IValue run_and_report(GraphModule& module, std::vector<c10::IValue> inputs,
                           ExecutionMode mode, const NodeValueFn& on_node,
                           bool enable_io_processing) {
  if (mode == ExecutionMode::kMeta) {
    for (c10::IValue& input : inputs) input = to_meta(input);
  }
  ReportingInterpreter interpreter(module, mode, on_node);
  try {
    return interpreter.run(std::move(inputs), {}, enable_io_processing);
  } catch (const CallbackException& e) {
    std::rethrow_exception(e.error);
  }
}

c10::IValue to_meta(const c10::IValue& value) {
  return map_tensors(value, /*to_meta=*/true);
}

c10::IValue evaluate_constant(GraphModule& module, const Node& node) {
  return ConstantEvaluator(module).evaluate(node);
}

std::vector<std::string> ops_without_meta_kernel() {
  return MissingMetaKernels::global().sorted();
}

}  // namespace fx
