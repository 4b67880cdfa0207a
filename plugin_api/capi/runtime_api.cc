// The FxApi entries that run graphs and read runtime values: GraphRun,
// GraphEvaluate, Value*, and GraphAddSubgraphModule. They need the graph's
// owning GraphModule.
#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>
#include <torch/nn/modules/conv.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/interpreter.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/value.h"
#include "plugin_api/capi/api_internal.h"

// What a node computed, with the metadata a plugin may ask for kept alive
// beside it.
struct FxValue {
  FxValue(c10::IValue v, const fx::Node* n) : value(std::move(v)), node(n) {}
  c10::IValue value;
  const fx::Node* node;  // the node that computed it, if any
  mutable std::vector<FxValue> items;
  mutable std::vector<double> scales;
  mutable std::vector<int64_t> zero_points;
  mutable std::string dtype_name;
};

namespace fx::host::internal {
namespace {

const FxValue* V(const FxValue* v) { return v; }

GraphModule& owning_module(Graph* g) {
  const GraphOwner* owner = require(g, "graph")->owning_module();
  auto* gm = dynamic_cast<const GraphModule*>(owner);
  if (gm == nullptr) {
    fail(FX_FAILED_PRECONDITION,
         "this graph has no owning GraphModule, so it cannot run");
  }
  return const_cast<GraphModule&>(*gm);
}

// A tensor input from DLPack: a view of real data, or a meta tensor.
at::Tensor input_tensor(const DLTensor* t, bool meta, size_t index) {
  if (t == nullptr) fail(FX_INVALID_ARGUMENT, cat("input ", index, " is NULL"));
  if (t->ndim < 0 || (t->ndim > 0 && t->shape == nullptr)) {
    fail(FX_INVALID_ARGUMENT, cat("input ", index, " has no shape"));
  }
  std::vector<int64_t> shape(t->shape, t->shape + t->ndim);
  at::ScalarType dtype;
  try {
    dtype = at::toScalarType(t->dtype);
  } catch (const std::exception&) {
    fail(FX_INVALID_ARGUMENT,
         cat("input ", index, " has an unsupported dtype"));
  }
  if (meta) {
    return at::empty(shape, at::TensorOptions().dtype(dtype).device(at::kMeta));
  }
  if (t->data == nullptr) {
    fail(FX_INVALID_ARGUMENT,
         cat("input ", index, " has no data (pass meta = 1 for a meta run)"));
  }
  if (t->device.device_type != kDLCPU) {
    fail(FX_INVALID_ARGUMENT, cat("input ", index, " is not a CPU tensor"));
  }
  std::vector<int64_t> strides(t->ndim);
  if (t->strides != nullptr) {
    strides.assign(t->strides, t->strides + t->ndim);
  } else {
    int64_t step = 1;
    for (int32_t d = t->ndim - 1; d >= 0; --d) {
      strides[d] = step;
      step *= shape[d];
    }
  }
  char* data = static_cast<char*>(t->data) + t->byte_offset;
  // Copy: the plugin's memory is borrowed only for this call.
  return at::from_blob(data, shape, strides, at::TensorOptions().dtype(dtype))
      .clone();
}

// The ops that failed on meta tensors, process-wide ("call_method:relu",
// "call_module:torch.nn.Conv2d").
struct MetaFailures {
  std::mutex mutex;
  absl::flat_hash_set<std::string> keys;
};
MetaFailures& meta_failures() {
  static auto* f = new MetaFailures();
  return *f;
}
bool lacks_meta_kernel(const std::string& key) {
  MetaFailures& f = meta_failures();
  std::lock_guard<std::mutex> lock(f.mutex);
  return f.keys.contains(key);
}
void remember_lacks_meta_kernel(std::string key) {
  MetaFailures& f = meta_failures();
  std::lock_guard<std::mutex> lock(f.mutex);
  f.keys.insert(std::move(key));
}

// Meta tensors <-> uninitialised CPU tensors of the same shape and strides.
c10::IValue map_tensors(const c10::IValue& v, bool to_meta) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (to_meta == t.is_meta() || !t.defined()) return v;
    at::TensorOptions options =
        t.options().device(to_meta ? at::kMeta : at::kCPU);
    return at::empty_strided(t.sizes(), t.strides(), options);
  }
  if (v.isTensorList()) {
    std::vector<at::Tensor> out;
    for (const at::Tensor& t : v.toTensorVector()) {
      out.push_back(map_tensors(t, to_meta).toTensor());
    }
    return out;
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> items;
    for (const c10::IValue& e : v.toTupleRef().elements()) {
      items.push_back(map_tensors(e, to_meta));
    }
    return c10::ivalue::Tuple::create(std::move(items));
  }
  if (v.isList() && !v.isIntList() && !v.isDoubleList() && !v.isBoolList()) {
    c10::impl::GenericList out(c10::AnyType::get());
    for (const c10::IValue& e : v.toListRef())
      out.push_back(map_tensors(e, to_meta));
    return out;
  }
  return v;
}

// Runs the module and reports every node's value. On meta inputs, a node
// whose kernel has no meta implementation in LibTorch runs once on
// uninitialised CPU tensors of the same shapes (no data is read back), and
// its result becomes meta again.
class ReportingInterpreter : public Interpreter {
 public:
  ReportingInterpreter(GraphModule& gm, bool meta, FxNodeValueFn on_node,
                       void* user_data)
      : Interpreter(gm, /*garbage_collect_values=*/true),
        meta_(meta),
        on_node_(on_node),
        user_data_(user_data) {}

  c10::IValue run_node(const Node& n) override {
    c10::IValue v;
    if (!meta_ || n.op() == Opcode::kPlaceholder || n.op() == Opcode::kOutput ||
        n.op() == Opcode::kGetAttr) {
      v = Interpreter::run_node(n);
    } else {
      // Ops known to lack a meta kernel go straight to the CPU fallback: a
      // failed attempt costs a c10::Error with its backtrace.
      std::string key = meta_key(n);
      if (std::optional<c10::IValue> shaped = meta_shape_rule(n, key)) {
        v = *std::move(shaped);
      } else if (lacks_meta_kernel(key)) {
        v = run_on_cpu(n);
      } else {
        try {
          v = Interpreter::run_node(n);
        } catch (const std::exception&) {
          v = run_on_cpu(n);
          remember_lacks_meta_kernel(std::move(key));
        }
      }
    }
    if (on_node_ != nullptr) {
      FxValue value(v, &n);
      FxStatus* status =
          on_node_(wrap(const_cast<Node*>(&n)), &value, user_data_);
      if (status != nullptr) throw StatusFromCallback{status};
    }
    return v;
  }

  struct StatusFromCallback {
    FxStatus* status;
  };

 private:
  // The result of a node whose op LibTorch 1.13 has no meta kernel for,
  // from its input's shape alone: shape-preserving ops (relu, hardswish,
  // hardtanh, batch and layer norms) and convolution modules. std::nullopt
  // for anything else (the CPU fallback handles it).
  std::optional<c10::IValue> meta_shape_rule(const Node& n,
                                             const std::string& key) const {
    static const auto* same_shape = new absl::flat_hash_set<std::string>{
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
    bool conv = key == "call_module:torch.nn.Conv1d" ||
                key == "call_module:torch.nn.Conv2d" ||
                key == "call_module:torch.nn.Conv3d";
    if (!conv && !same_shape->contains(key)) return std::nullopt;
    if (n.args().empty() || !n.args()[0].is_node()) return std::nullopt;
    auto it = env_.find(n.args()[0].as_node());
    if (it == env_.end() || !it->second.isTensor()) return std::nullopt;
    const at::Tensor& x = it->second.toTensor();
    if (!x.is_meta()) return std::nullopt;
    if (!conv) return c10::IValue(at::empty_like(x));
    std::shared_ptr<torch::nn::Module> m = module_.get_submodule(n.target());
    if (auto* c = dynamic_cast<torch::nn::Conv1dImpl*>(m.get())) {
      return conv_shape<1>(x, *c);
    }
    if (auto* c = dynamic_cast<torch::nn::Conv2dImpl*>(m.get())) {
      return conv_shape<2>(x, *c);
    }
    if (auto* c = dynamic_cast<torch::nn::Conv3dImpl*>(m.get())) {
      return conv_shape<3>(x, *c);
    }
    return std::nullopt;
  }

  template <size_t D, typename Conv>
  static std::optional<c10::IValue> conv_shape(const at::Tensor& x,
                                               const Conv& conv) {
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
      if (const auto* pad =
              c10::get_if<torch::ExpandingArray<D>>(&o.padding())) {
        p = (**pad)[d];
      } else if (c10::get_if<torch::enumtype::kSame>(&o.padding())) {
        out.push_back(in);  // 'same' (stride 1)
        continue;
      }
      out.push_back((in + 2 * p - dil * (k - 1) - 1) / s + 1);
    }
    return c10::IValue(at::empty(out, x.options()));
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
  FxNodeValueFn on_node_;
  void* user_data_;
};

// Evaluates the nodes `target` depends on, from attributes alone.
class ConstantEvaluator : public Interpreter {
 public:
  explicit ConstantEvaluator(GraphModule& gm)
      : Interpreter(gm, /*garbage_collect_values=*/false) {}
  c10::IValue evaluate(const Node& target) {
    absl::flat_hash_set<const Node*> needed;
    std::vector<const Node*> todo{&target};
    while (!todo.empty()) {
      const Node* n = todo.back();
      todo.pop_back();
      if (!needed.insert(n).second) continue;
      if (n->op() == Opcode::kPlaceholder) {
        fail(FX_FAILED_PRECONDITION,
             cat("node '", target.name(), "' depends on placeholder '",
                 n->name(), "', so it is not a constant"));
      }
      for (const Node* input : n->all_input_nodes()) todo.push_back(input);
    }
    for (const Node* n : module_.graph().nodes()) {
      if (needed.contains(n)) env_[n] = run_node(*n);
      if (n == &target) break;
    }
    return env_[&target];
  }
};

std::string_view memory_format_of(const at::Tensor& t) {
  if (t.is_contiguous(at::MemoryFormat::Contiguous)) {
    return "torch.contiguous_format";
  }
  if (t.dim() == 4 && t.is_contiguous(at::MemoryFormat::ChannelsLast)) {
    return "torch.channels_last";
  }
  if (t.dim() == 5 && t.is_contiguous(at::MemoryFormat::ChannelsLast3d)) {
    return "torch.channels_last_3d";
  }
  return "";
}

std::string_view qscheme_name(at::QScheme q) {
  switch (q) {
    case at::kPerTensorAffine:
      return "torch.per_tensor_affine";
    case at::kPerChannelAffine:
      return "torch.per_channel_affine";
    case at::kPerTensorSymmetric:
      return "torch.per_tensor_symmetric";
    case at::kPerChannelSymmetric:
      return "torch.per_channel_symmetric";
    case at::kPerChannelAffineFloatQParams:
      return "torch.per_channel_affine_float_qparams";
    default:
      return "";
  }
}

// DLPack has no quantized types: their storage type.
DLDataType storage_dtype(const at::Tensor& t) {
  at::ScalarType s = t.scalar_type();
  if (s == at::kQInt8) s = at::kChar;
  if (s == at::kQUInt8) s = at::kByte;
  if (s == at::kQInt32) s = at::kInt;
  DLDataType out;
  out.lanes = 1;
  out.bits = static_cast<uint8_t>(c10::elementSize(s) * 8);
  out.code = at::isFloatingType(s)  ? kDLFloat
             : s == at::kBool       ? kDLUInt
             : at::isSignedType(s)  ? kDLInt
             : at::isComplexType(s) ? kDLComplex
                                    : kDLUInt;
  if (s == at::kBFloat16) out.code = kDLBfloat;
  return out;
}

const at::Tensor& require_tensor(const FxValue* v) {
  require(v, "value");
  if (!v->value.isTensor()) {
    fail(FX_INVALID_ARGUMENT,
         cat("the value is a ", v->value.tagKind(), ", not a tensor"));
  }
  return v->value.toTensor();
}

void fill_items(const FxValue* v) {
  if (!v->items.empty()) return;
  const c10::IValue& x = v->value;
  if (x.isTuple()) {
    for (const c10::IValue& e : x.toTupleRef().elements()) {
      v->items.emplace_back(e, nullptr);
    }
  } else if (x.isList()) {
    for (const c10::IValue& e : x.toListRef()) {
      v->items.emplace_back(e, nullptr);
    }
  }
}

}  // namespace

void fill_runtime_entries(FxApi& t) {
  t.GraphRun = [](FxGraph* g, const DLTensor* const* inputs, size_t n, int meta,
                  FxNodeValueFn on_node, void* user_data) {
    FxStatus* from_callback = nullptr;
    FxStatus* status = guarded("GraphRun", [&] {
      GraphModule& gm = owning_module(unwrap(g));
      if (n > 0) require(inputs, "inputs");
      std::vector<c10::IValue> args;
      for (size_t i = 0; i < n; ++i) {
        args.emplace_back(input_tensor(inputs[i], meta != 0, i));
      }
      at::NoGradGuard no_grad;
      ReportingInterpreter interpreter(gm, meta != 0, on_node, user_data);
      try {
        interpreter.run(std::move(args));
      } catch (const ReportingInterpreter::StatusFromCallback& s) {
        from_callback = s.status;
      }
    });
    if (from_callback != nullptr) {
      if (status != nullptr) delete status;
      return from_callback;
    }
    return status;
  };
  t.GraphEvaluate = [](FxGraph* g, FxNode* node, FxNodeValueFn on_value,
                       void* user_data) {
    FxStatus* from_callback = nullptr;
    FxStatus* status = guarded("GraphEvaluate", [&] {
      GraphModule& gm = owning_module(unwrap(g));
      Node* n = unwrap(require(node, "node"));
      require(on_value, "on_value");
      at::NoGradGuard no_grad;
      ConstantEvaluator evaluator(gm);
      FxValue value(evaluator.evaluate(*n), n);
      from_callback = on_value(node, &value, user_data);
    });
    return from_callback != nullptr ? from_callback : status;
  };

  t.ValueKind = [](const FxValue* v) -> FxValueKind {
    if (v == nullptr) return FX_VALUE_OTHER;
    const c10::IValue& x = v->value;
    if (x.isNone()) return FX_VALUE_NONE;
    if (x.isTensor()) return FX_VALUE_TENSOR;
    if (x.isBool()) return FX_VALUE_BOOL;
    if (x.isInt()) return FX_VALUE_INT;
    if (x.isDouble()) return FX_VALUE_FLOAT;
    if (x.isString()) return FX_VALUE_STRING;
    if (x.isTuple() || x.isList()) return FX_VALUE_SEQUENCE;
    return FX_VALUE_OTHER;
  };
  t.ValueTypeName = [](const FxValue* v) -> const char* {
    if (v == nullptr) return "";
    const c10::IValue& x = v->value;
    if (x.isNone()) return "NoneType";
    if (x.isTensor()) return "torch.Tensor";
    if (x.isBool()) return "bool";
    if (x.isInt()) return "int";
    if (x.isDouble()) return "float";
    if (x.isString()) return "str";
    if (x.isTuple()) return "tuple";
    if (x.isIntList() && v->node != nullptr &&
        ((v->node->op() == Opcode::kCallMethod &&
          v->node->target() == "size") ||
         (v->node->op() == Opcode::kCallFunction &&
          v->node->target() == "builtins.getattr"))) {
      return "torch.Size";
    }
    if (x.isList()) return "list";
    return "object";
  };
  t.ValueTensorMeta = [](const FxValue* v, FxTensorMeta* out) {
    return guarded("ValueTensorMeta", [&] {
      const at::Tensor& x = require_tensor(v);
      require(out, "out");
      *out = FxTensorMeta{};
      out->ndim = static_cast<int32_t>(x.dim());
      out->shape = x.sizes().data();
      out->strides = x.strides().data();
      out->dtype = storage_dtype(x);
      v->dtype_name = dtype_name(x.scalar_type());
      out->dtype_name = v->dtype_name.c_str();
      out->memory_format = memory_format_of(x).data();
      out->requires_grad = x.requires_grad() ? 1 : 0;
      out->is_quantized = x.is_quantized() ? 1 : 0;
      out->qscheme = "";
      out->axis = -1;
      if (x.is_quantized() && !x.is_meta()) {
        at::QScheme q = x.qscheme();
        out->qscheme = qscheme_name(q).data();
        if (q == at::kPerTensorAffine || q == at::kPerTensorSymmetric) {
          out->scale = x.q_scale();
          out->zero_point = x.q_zero_point();
        } else {
          out->axis = x.q_per_channel_axis();
          at::Tensor s = x.q_per_channel_scales().to(at::kDouble).contiguous();
          at::Tensor z =
              x.q_per_channel_zero_points().to(at::kLong).contiguous();
          v->scales.assign(s.data_ptr<double>(),
                           s.data_ptr<double>() + s.numel());
          v->zero_points.assign(z.data_ptr<int64_t>(),
                                z.data_ptr<int64_t>() + z.numel());
          out->num_channels = v->scales.size();
          out->scales = v->scales.data();
          out->zero_points = v->zero_points.data();
        }
      }
    });
  };
  t.ValueToDLPack = [](const FxValue* v, DLManagedTensor** out) {
    return guarded("ValueToDLPack", [&] {
      const at::Tensor& x = require_tensor(v);
      require(out, "out");
      if (x.is_meta()) {
        fail(FX_FAILED_PRECONDITION, "a meta tensor has no data");
      }
      *out = at::toDLPack(x.is_quantized() ? x.int_repr() : x.detach());
    });
  };
  t.ValueGetBool = [](const FxValue* v, int* out) {
    return guarded("ValueGetBool", [&] {
      if (!require(v, "value")->value.isBool()) {
        fail(FX_INVALID_ARGUMENT, "the value is not a bool");
      }
      *require(out, "out") = v->value.toBool() ? 1 : 0;
    });
  };
  t.ValueGetInt = [](const FxValue* v, int64_t* out) {
    return guarded("ValueGetInt", [&] {
      if (!require(v, "value")->value.isInt()) {
        fail(FX_INVALID_ARGUMENT, "the value is not an int");
      }
      *require(out, "out") = v->value.toInt();
    });
  };
  t.ValueGetFloat = [](const FxValue* v, double* out) {
    return guarded("ValueGetFloat", [&] {
      const c10::IValue& x = require(v, "value")->value;
      if (!x.isDouble() && !x.isInt()) {
        fail(FX_INVALID_ARGUMENT, "the value is not a number");
      }
      *require(out, "out") = x.isDouble() ? x.toDouble() : x.toInt();
    });
  };
  t.ValueSize = [](const FxValue* v) -> size_t {
    if (v == nullptr) return 0;
    fill_items(v);
    return v->items.size();
  };
  t.ValueItem = [](const FxValue* v, size_t i) -> const FxValue* {
    if (v == nullptr) return nullptr;
    fill_items(v);
    return i < v->items.size() ? V(&v->items[i]) : nullptr;
  };

  t.GraphAddSubgraphModule = [](FxGraph* g, const char* name, FxGraph** out) {
    return guarded("GraphAddSubgraphModule", [&] {
      GraphModule& gm = owning_module(unwrap(g));
      require(name, "qualified_name");
      require(out, "out");
      if (gm.get_submodule(name) != nullptr || gm.get_attr(name).defined()) {
        fail(FX_FAILED_PRECONDITION,
             cat("the module already has an attribute '", name, "'"));
      }
      auto child = std::make_shared<GraphModule>(GraphModule::AttributeMap{},
                                                 std::make_unique<Graph>());
      gm.add_submodule(name, child);
      *out = wrap(&child->graph());
    });
  };

  t.GraphModuleConfig = [](const FxGraph* g, const char* name, FxArg** out) {
    return guarded("GraphModuleConfig", [&] {
      GraphModule& gm = owning_module(const_cast<Graph*>(unwrap(g)));
      require(name, "qualified_name");
      require(out, "out");
      std::shared_ptr<torch::nn::Module> m = gm.get_submodule(name);
      if (m == nullptr) {
        fail(FX_NOT_FOUND, cat("the module has no submodule '", name, "'"));
      }
      const ModuleKind* kind = ModuleRegistry::global().find(*m);
      if (kind == nullptr || !kind->describe) {
        fail(FX_UNIMPLEMENTED, cat("the module '", name, "' (", m->name(),
                                   ") cannot describe its configuration"));
      }
      *out = wrap(new Argument(Argument::dict(kind->describe(*m))));
    });
  };
  t.GraphShareAttr = [](FxGraph* g, FxGraph* sub, const char* name) {
    return guarded("GraphShareAttr", [&] {
      GraphModule& gm = owning_module(unwrap(g));
      GraphModule& child = owning_module(unwrap(require(sub, "subgraph")));
      require(name, "qualified_name");
      bool is_child = false;
      for (const auto& c : gm.named_modules("", /*include_self=*/false)) {
        if (c.value().get() == &child) is_child = true;
      }
      if (!is_child) {
        fail(FX_INVALID_ARGUMENT,
             "the subgraph's module is not a submodule of the graph's module");
      }
      if (std::shared_ptr<torch::nn::Module> m = gm.get_submodule(name)) {
        child.add_submodule(name, std::move(m));
        return;
      }
      at::Tensor t = gm.get_attr(name);
      if (!t.defined()) {
        fail(FX_NOT_FOUND,
             cat("the module has no submodule, parameter or buffer '", name,
                 "'"));
      }
      bool is_parameter = false;
      for (const auto& p : gm.named_parameters(/*recurse=*/true)) {
        if (p.key() == name) is_parameter = true;
      }
      child.set_attr(name, t, is_parameter);
    });
  };
}

}  // namespace fx::host::internal
