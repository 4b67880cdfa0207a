// The FxApi entries that run graphs and read runtime values: GraphRun and
// GraphEvaluate (fx_core/runtime/meta_execution behind the table), Value*
// (ValueStorage, version 12: a run numbers the storages it is asked about),
// and the submodule entries (GraphAddSubgraphModule, GraphModuleConfig,
// GraphShareAttr). They need the graph's owning GraphModule.
#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "fx_core/format/code_names.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/meta_execution.h"
#include "fx_core/runtime/module_path.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/value.h"
#include "host/capi/api_internal.h"
#include "host/capi/wrap.h"

namespace fx::host::internal {
class RunStorages;
}  // namespace fx::host::internal

// What a node computed, with the metadata a plugin may ask for kept alive
// beside it. Lent to a callback as a checked handle (ScopedValue), as are
// its items.
struct FxValue {
  FxValue(c10::IValue v, const fx::Node* n,
          fx::host::internal::RunStorages* r = nullptr)
      : value(std::move(v)), node(n), run(r) {}
  c10::IValue value;
  const fx::Node* node;  // the node that computed it, if any
  // The storages of the GraphRun it is a value of (ValueStorage), or
  // nullptr (GraphEvaluate).
  fx::host::internal::RunStorages* run;
  mutable std::vector<FxValue> items;
  mutable std::vector<double> scales;
  mutable std::vector<int64_t> zero_points;
  mutable std::string dtype_name;

  // The handle table's slot (HandleTable::handle_of).
  uint32_t external_slot() const { return slot; }
  void set_external_slot(uint32_t s) const { slot = s; }
  mutable uint32_t slot = 0;
};

namespace fx::host::internal {

GraphModule& owning_module(const Graph* g) {
  const GraphOwner* owner = require(g, "graph")->owning_module();
  auto* gm = dynamic_cast<const GraphModule*>(owner);
  if (gm == nullptr) {
    fail(FX_FAILED_PRECONDITION,
         "this graph has no owning GraphModule, so it cannot run");
  }
  return const_cast<GraphModule&>(*gm);
}

// The storages a GraphRun has numbered for ValueStorage: 1, 2, 3, ... in
// the order they were first asked about, each kept alive until the run
// returns, so that no later storage takes the address (and the number) of
// one that died.
class RunStorages {
 public:
  uint64_t id_of(const c10::Storage& storage) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto [it, added] =
        ids_.try_emplace(storage.unsafeGetStorageImpl(), kept_.size() + 1);
    if (added) kept_.push_back(storage);
    return it->second;
  }

 private:
  std::mutex mutex_;
  absl::flat_hash_map<const c10::StorageImpl*, uint64_t> ids_;
  std::vector<c10::Storage> kept_;
};

namespace {

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

// One tensor per placeholder, from the plugin's DLPack tensors.
std::vector<c10::IValue> input_values(const DLTensor* const* inputs, size_t n,
                                      bool meta) {
  if (n > 0) require(inputs, "inputs");
  std::vector<c10::IValue> args;
  for (size_t i = 0; i < n; ++i) {
    args.emplace_back(input_tensor(inputs[i], meta, i));
  }
  return args;
}

// A plugin's callback returned an error: thrown out of the run, returned.
struct StatusFromCallback {
  FxStatus* status;
};

// FxValue <-> its handle, checked like the others (wrap.h).
const FxValue* wrap_value(const FxValue* v) {
  return reinterpret_cast<const FxValue*>(handle_of(v, HandleKind::kValue));
}
const FxValue* unwrap_value(const FxValue* h) {
  return static_cast<const FxValue*>(checked(h, HandleKind::kValue));
}
const FxValue* peek_value(const FxValue* h) {
  return static_cast<const FxValue*>(peeked(h, HandleKind::kValue));
}

// Lends `value` to a callback: handle() is its handle until destruction,
// when it and the handles of its items turn stale.
class ScopedValue {
 public:
  explicit ScopedValue(const FxValue& value) : value_(value) {}
  ~ScopedValue() { forget(value_); }
  ScopedValue(const ScopedValue&) = delete;
  ScopedValue& operator=(const ScopedValue&) = delete;
  const FxValue* handle() const { return wrap_value(&value_); }

 private:
  static void forget(const FxValue& v) {
    for (const FxValue& item : v.items) forget(item);
    HandleTable::instance().forget(&v);
  }
  const FxValue& value_;
};

FxStatus* graph_run(FxGraph* g, const DLTensor* const* inputs, size_t n,
                    int meta, FxNodeValueFn on_node, void* user_data) {
  FxStatus* from_callback = nullptr;
  FxStatus* status = guarded("GraphRun", [&] {
    GraphModule& gm = owning_module(unwrap(g));
    std::vector<c10::IValue> args = input_values(inputs, n, meta != 0);
    RunStorages storages;  // outlives every value lent during the run
    NodeValueFn report;
    if (on_node != nullptr) {
      report = [&](const Node& node, const c10::IValue& v) {
        FxValue value(v, &node, &storages);
        ScopedValue lent(value);
        // The graph is the plugin's to read (its FxGraph* is not const).
        Node* mutable_node = const_cast<Node*>(&node);
        FxStatus* s = on_node(wrap(mutable_node), lent.handle(), user_data);
        if (s != nullptr) throw StatusFromCallback{s};
      };
    }
    // As torch.fx runs (GraphRun's contract): values' requires_grad is
    // torch.fx's.
    c10::AutoGradMode grad_mode(true);
    try {
      // One input per placeholder (GraphRun's contract), also for a pytree
      // graph, whose forward takes them nested: no input processing.
      run_and_report(gm, std::move(args),
                     meta != 0 ? ExecutionMode::kMeta : ExecutionMode::kReal,
                     report, /*enable_io_processing=*/false);
    } catch (const StatusFromCallback& s) {
      from_callback = s.status;
    }
  });
  if (from_callback != nullptr) {
    release_object(status);
    return from_callback;
  }
  return status;
}

FxStatus* graph_evaluate(FxGraph* g, FxNode* node, FxNodeValueFn on_value,
                         void* user_data) {
  FxStatus* from_callback = nullptr;
  FxStatus* status = guarded("GraphEvaluate", [&] {
    GraphModule& gm = owning_module(unwrap(g));
    Node* n = unwrap(require(node, "node"));
    require(on_value, "on_value");
    at::NoGradGuard no_grad;
    FxValue value(evaluate_constant(gm, *n), n);
    ScopedValue lent(value);
    from_callback = on_value(node, lent.handle(), user_data);
  });
  return from_callback != nullptr ? from_callback : status;
}

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

// None, or an undefined tensor: what an operator returns for an output it
// did not compute (_native_multi_head_attention's weights without
// need_weights), which Python sees as None.
bool is_none(const c10::IValue& x) {
  return x.isNone() || (x.isTensor() && !x.toTensor().defined());
}

// The tensor of a value (unwrapped).
const at::Tensor& require_tensor(const FxValue* v) {
  require(v, "value");
  if (is_none(v->value)) {
    fail(FX_INVALID_ARGUMENT, "the value is None, not a tensor");
  }
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
      v->items.emplace_back(e, nullptr, v->run);
    }
  } else if (x.isList()) {
    for (const c10::IValue& e : x.toListRef()) {
      v->items.emplace_back(e, nullptr, v->run);
    }
  }
}

// GraphRun, GraphEvaluate.
void fill_run_entries(FxApi& t) {
  t.GraphRun = graph_run;
  t.GraphEvaluate = graph_evaluate;
}

// ------------------------------------------------------------------ values

FxValueKind value_kind(const FxValue* h) {
  const FxValue* v = peek_value(h);
  if (v == nullptr) return FX_VALUE_OTHER;
  const c10::IValue& x = v->value;
  if (is_none(x)) return FX_VALUE_NONE;
  if (x.isTensor()) return FX_VALUE_TENSOR;
  if (x.isBool()) return FX_VALUE_BOOL;
  if (x.isInt()) return FX_VALUE_INT;
  if (x.isDouble()) return FX_VALUE_FLOAT;
  if (x.isString()) return FX_VALUE_STRING;
  if (x.isTuple() || x.isList()) return FX_VALUE_SEQUENCE;
  return FX_VALUE_OTHER;
}

const char* value_type_name(const FxValue* h) {
  const FxValue* v = peek_value(h);
  if (v == nullptr) return "";
  const c10::IValue& x = v->value;
  if (is_none(x)) return "NoneType";
  if (x.isTensor()) return "torch.Tensor";
  if (x.isBool()) return "bool";
  if (x.isInt()) return "int";
  if (x.isDouble()) return "float";
  if (x.isString()) return "str";
  if (x.isTuple()) {
    // torch.Size, torch.return_types.*: the name lives in the named tuple
    // type, which is cached for the life of the process.
    // (A plain tuple's type is inferred from its elements, which LibTorch
    // refuses for an undefined tensor: a plain tuple all the same.)
    c10::TupleTypePtr type;
    try {
      type = x.toTupleRef().type();
    } catch (const c10::Error&) {
      return "tuple";
    }
    return type->name() ? type->name()->qualifiedName().c_str() : "tuple";
  }
  if (x.isList()) return "list";
  return "object";
}

// The quantization fields of *out for a quantized tensor with data; the
// per-channel arrays are kept alive in `v`.
void fill_quantization(const at::Tensor& x, const FxValue* v,
                       FxTensorMeta* out) {
  at::QScheme q = x.qscheme();
  out->qscheme = qscheme_name(q).data();
  if (q == at::kPerTensorAffine || q == at::kPerTensorSymmetric) {
    out->scale = x.q_scale();
    out->zero_point = x.q_zero_point();
    return;
  }
  out->axis = x.q_per_channel_axis();
  at::Tensor s = x.q_per_channel_scales().to(at::kDouble).contiguous();
  at::Tensor z = x.q_per_channel_zero_points().to(at::kLong).contiguous();
  v->scales.assign(s.data_ptr<double>(), s.data_ptr<double>() + s.numel());
  v->zero_points.assign(z.data_ptr<int64_t>(),
                        z.data_ptr<int64_t>() + z.numel());
  out->num_channels = v->scales.size();
  out->scales = v->scales.data();
  out->zero_points = v->zero_points.data();
}

// The metadata of a tensor value (its strings kept alive by the value).
FxTensorMeta tensor_meta_of(const FxValue* h) {
  const FxValue* v = unwrap_value(h);
  const at::Tensor& x = require_tensor(v);
  FxTensorMeta meta{};
  meta.ndim = static_cast<int32_t>(x.dim());
  meta.shape = x.sizes().data();
  meta.strides = x.strides().data();
  meta.dtype = storage_dtype(x);
  v->dtype_name = dtype_name(x.scalar_type());
  meta.dtype_name = v->dtype_name.c_str();
  meta.memory_format = memory_format_of(x).data();
  meta.requires_grad = x.requires_grad() ? 1 : 0;
  meta.is_quantized = x.is_quantized() ? 1 : 0;
  meta.qscheme = "";
  meta.axis = -1;
  if (x.is_quantized() && !x.is_meta()) fill_quantization(x, v, &meta);
  return meta;
}

FxStatus* value_tensor_meta(const FxValue* v, FxTensorMeta* out) {
  return guarded("ValueTensorMeta", [&] {
    FxTensorMeta meta = tensor_meta_of(v);
    write_tensor_meta(meta, require(out, "out"), kTensorMetaV1Size);
  });
}

FxStatus* value_tensor_meta2(const FxValue* v, FxTensorMeta* out) {
  return guarded("ValueTensorMeta2", [&] {
    size_t size = declared_tensor_meta_size(out);
    write_tensor_meta(tensor_meta_of(v), out, size);
  });
}

// ValueGetBool, ValueGetInt, ValueGetFloat.
void fill_scalar_value_entries(FxApi& t) {
  t.ValueGetBool = [](const FxValue* h, int* out) {
    return guarded("ValueGetBool", [&] {
      const FxValue* v = unwrap_value(h);
      if (!require(v, "value")->value.isBool()) {
        fail(FX_INVALID_ARGUMENT, "the value is not a bool");
      }
      *require(out, "out") = v->value.toBool() ? 1 : 0;
    });
  };
  t.ValueGetInt = [](const FxValue* h, int64_t* out) {
    return guarded("ValueGetInt", [&] {
      const FxValue* v = unwrap_value(h);
      if (!require(v, "value")->value.isInt()) {
        fail(FX_INVALID_ARGUMENT, "the value is not an int");
      }
      *require(out, "out") = v->value.toInt();
    });
  };
  t.ValueGetFloat = [](const FxValue* h, double* out) {
    return guarded("ValueGetFloat", [&] {
      const c10::IValue& x = require(unwrap_value(h), "value")->value;
      if (!x.isDouble() && !x.isInt()) {
        fail(FX_INVALID_ARGUMENT, "the value is not a number");
      }
      *require(out, "out") = x.isDouble() ? x.toDouble() : x.toInt();
    });
  };
}

// ValueStorage: a tensor value's storage, numbered within its run.
FxStatus* value_storage(const FxValue* h, uint64_t* storage, int64_t* offset) {
  return guarded("ValueStorage", [&] {
    const FxValue* v = unwrap_value(h);
    const at::Tensor& x = require_tensor(v);
    if (v->run == nullptr) {
      fail(FX_INVALID_ARGUMENT,
           "the value is not a value of a GraphRun in progress (GraphEvaluate "
           "numbers no storages)");
    }
    if (!x.defined()) fail(FX_INVALID_ARGUMENT, "the tensor is undefined");
    if (!x.has_storage()) {
      fail(FX_INVALID_ARGUMENT,
           "the tensor has no storage (a sparse or mkldnn tensor)");
    }
    if (storage != nullptr) *storage = v->run->id_of(x.storage());
    if (offset != nullptr) *offset = x.storage_offset();
  });
}

// ValueKind .. ValueItem, ValueStorage.
void fill_value_entries(FxApi& t) {
  t.ValueKind = value_kind;
  t.ValueTypeName = value_type_name;
  t.ValueTensorMeta = value_tensor_meta;
  t.ValueTensorMeta2 = value_tensor_meta2;
  t.ValueToDLPack = [](const FxValue* v, DLManagedTensor** out) {
    return guarded("ValueToDLPack", [&] {
      const at::Tensor& x = require_tensor(unwrap_value(v));
      require(out, "out");
      if (x.is_meta()) {
        fail(FX_FAILED_PRECONDITION, "a meta tensor has no data");
      }
      *out = at::toDLPack(x.is_quantized() ? x.int_repr() : x.detach());
    });
  };
  fill_scalar_value_entries(t);
  t.ValueSize = [](const FxValue* h) -> size_t {
    const FxValue* v = peek_value(h);
    if (v == nullptr) return 0;
    fill_items(v);
    return v->items.size();
  };
  t.ValueItem = [](const FxValue* h, size_t i) -> const FxValue* {
    const FxValue* v = peek_value(h);
    if (v == nullptr) return nullptr;
    fill_items(v);
    return i < v->items.size() ? wrap_value(&v->items[i]) : nullptr;
  };
  t.ValueStorage = value_storage;
}

// -------------------------------------------------------------- submodules

void add_subgraph_module(FxGraph* g, const char* name, FxGraph** out) {
  GraphModule& gm = owning_module(unwrap(g));
  require(name, "qualified_name");
  require(out, "out");
  if (gm.get_submodule(name) != nullptr || gm.get_attr(name).defined()) {
    fail(FX_FAILED_PRECONDITION,
         cat("the module already has an attribute '", name, "'"));
  }
  auto child = std::make_shared<GraphModule>(GraphModule::AttributeMap{},
                                             std::make_unique<Graph>());
  // The nodes the pass moves into the child may call gm's own targets.
  if (!gm.foreign_targets().empty()) {
    child->set_foreign_targets(gm.foreign_targets());
  }
  gm.add_submodule(name, child);
  *out = wrap(&child->graph());
}

void module_config(const FxGraph* g, const char* name, FxArg** out) {
  GraphModule& gm = owning_module(unwrap(g));
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
  *out = give(Argument::dict(kind->describe(*m)));
}

void module_parameters(const FxGraph* g, const char* name, FxArg** out) {
  GraphModule& gm = owning_module(unwrap(g));
  require(name, "qualified_name");
  require(out, "out");
  std::shared_ptr<torch::nn::Module> sub;
  torch::nn::Module* m = &gm;
  if (*name != '\0') {
    sub = gm.get_submodule(name);
    if (sub == nullptr) {
      fail(FX_NOT_FOUND, cat("the module has no submodule '", name, "'"));
    }
    m = sub.get();
  }
  const std::string prefix = *name != '\0' ? cat(name, ".") : "";
  std::vector<const void*> seen;
  ArgumentDict shapes;
  for (const auto& p : m->named_parameters(/*recurse=*/true)) {
    const void* impl = p.value().unsafeGetTensorImpl();
    if (std::find(seen.begin(), seen.end(), impl) != seen.end()) continue;
    seen.push_back(impl);
    ArgumentList sizes(p.value().sizes().begin(), p.value().sizes().end());
    shapes.emplace_back(prefix + p.key(), Argument::tuple(std::move(sizes)));
  }
  *out = give(Argument::dict(std::move(shapes)));
}

// Whether `child` is a module below `m`, by identity: a walk of the
// children in place (named_modules() would build every module's name, once
// per attribute a split shares).
bool is_submodule(const torch::nn::Module& m, const GraphModule& child) {
  for (const auto& c : children_of(m)) {
    if (c.value().get() == &child || is_submodule(*c.value(), child)) {
      return true;
    }
  }
  return false;
}

// Whether `child` already holds `object` (a module or a tensor) at `name`:
// false when it holds nothing there; FX_FAILED_PRECONDITION when it holds
// something else.
bool holds_already(GraphModule& child, const std::string& name,
                   const void* object) {
  const void* held = nullptr;
  if (std::shared_ptr<torch::nn::Module> m = child.get_submodule(name)) {
    held = m.get();
  } else if (at::Tensor t = child.get_attr(name); t.defined()) {
    held = t.unsafeGetTensorImpl();
  }
  if (held == nullptr) return false;
  if (held != object) {
    fail(FX_FAILED_PRECONDITION,
         cat("the subgraph's module already has another attribute '", name,
             "'"));
  }
  return true;
}

// GraphShareAttr (as_name NULL: the same name, replacing what is there) and
// GraphShareAttrAs (refusing to replace another object).
void share_attr(FxGraph* g, FxGraph* sub, const char* name,
                const char* as_name) {
  GraphModule& gm = owning_module(unwrap(g));
  GraphModule& child = owning_module(unwrap(require(sub, "subgraph")));
  require(name, "qualified_name");
  const bool checked = as_name != nullptr;
  const std::string as = checked ? as_name : name;
  if (checked && !is_attribute_path(as)) {
    fail(FX_INVALID_ARGUMENT,
         cat("name '", as, "' is not a qualified attribute name"));
  }
  if (!is_submodule(gm, child)) {
    fail(FX_INVALID_ARGUMENT,
         "the subgraph's module is not a submodule of the graph's module");
  }
  if (std::shared_ptr<torch::nn::Module> m = gm.get_submodule(name)) {
    if (checked && holds_already(child, as, m.get())) return;
    child.add_submodule(as, std::move(m));
    return;
  }
  std::optional<TensorAttr> t = tensor_at(gm, name);
  if (!t || !t->tensor.defined()) {
    fail(FX_NOT_FOUND,
         cat("the module has no submodule, parameter or buffer '", name, "'"));
  }
  const at::Tensor& tensor = t->tensor;
  if (checked && holds_already(child, as, tensor.unsafeGetTensorImpl())) return;
  child.set_attr(as, tensor, t->is_parameter, gm.buffer_kind(name));
}

// GraphAddSubgraphModule, GraphModuleConfig, GraphShareAttr(As).
void fill_submodule_entries(FxApi& t) {
  t.GraphAddSubgraphModule = [](FxGraph* g, const char* name, FxGraph** out) {
    return guarded("GraphAddSubgraphModule",
                   [&] { add_subgraph_module(g, name, out); });
  };
  t.GraphModuleConfig = [](const FxGraph* g, const char* name, FxArg** out) {
    return guarded("GraphModuleConfig", [&] { module_config(g, name, out); });
  };
  t.GraphShareAttr = [](FxGraph* g, FxGraph* sub, const char* name) {
    return guarded("GraphShareAttr",
                   [&] { share_attr(g, sub, name, nullptr); });
  };
  t.GraphShareAttrAs = [](FxGraph* g, FxGraph* sub, const char* name,
                          const char* as_name) {
    return guarded("GraphShareAttrAs",
                   [&] { share_attr(g, sub, name, require(as_name, "name")); });
  };
  t.GraphModuleParameters = [](const FxGraph* g, const char* name,
                               FxArg** out) {
    return guarded("GraphModuleParameters",
                   [&] { module_parameters(g, name, out); });
  };
  t.GraphModuleTraining = [](const FxGraph* g, const char* name) -> int {
    const Graph* graph = peek(g);
    auto* gm = graph == nullptr
                   ? nullptr
                   : dynamic_cast<const GraphModule*>(graph->owning_module());
    if (gm == nullptr || name == nullptr) return -1;
    std::shared_ptr<torch::nn::Module> m =
        const_cast<GraphModule*>(gm)->get_submodule(name);
    if (m == nullptr) return -1;
    return m->is_training() ? 1 : 0;
  };
}

}  // namespace

void write_tensor_meta(const FxTensorMeta& meta, FxTensorMeta* out,
                       size_t size) {
  // A version-1 caller's struct ends where struct_size would begin: nothing
  // past kTensorMetaV1Size is read or written then.
  bool sized = size > kTensorMetaV1Size;
  uint32_t declared = sized ? out->struct_size : 0;
  std::memcpy(out, &meta, std::min(size, sizeof(FxTensorMeta)));
  if (sized) out->struct_size = declared;
}

size_t declared_tensor_meta_size(const FxTensorMeta* out) {
  require(out, "out");
  if (out->struct_size < kTensorMetaV1Size + sizeof(out->struct_size)) {
    fail(FX_INVALID_ARGUMENT,
         cat("out->struct_size is ", out->struct_size,
             ", smaller than an FxTensorMeta of version 2 (",
             kTensorMetaV1Size + sizeof(out->struct_size),
             "); set it to sizeof(FxTensorMeta) (FX_TENSOR_META_INIT)"));
  }
  return out->struct_size;
}

void fill_runtime_entries(FxApi& t) {
  fill_run_entries(t);
  fill_value_entries(t);
  fill_submodule_entries(t);
}

}  // namespace fx::host::internal
