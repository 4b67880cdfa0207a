// Registration of plugins' tracer and runtime extensions, and the FxApi
// entries custom ops use (Register*, Call*).
#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>

#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "fx_core/capture/capture_extensions.h"
#include "fx_core/capture/graph_decomposition.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/runtime/value.h"
#include "host/capi/api_internal.h"
#include "host/capi/extensions.h"
#include "host/handles/wrap.h"

namespace fx::host {
namespace internal {

// What an FxRegistrar names (a checked handle, lent while its plugin
// registers): who registers (for messages).
template <>
struct HostObject<FxRegistrar> : HandleSlot {
  std::string origin;
  std::string plugin;
  uint32_t api_version = 0;  // of the table the plugin's functions are handed
  // make_fx's decompositions and leaf ops, registered together when
  // register_extensions succeeds (none when it fails).
  std::vector<capture::CaptureExtension> capture = {};
};
using Registrar = HostObject<FxRegistrar>;

// What an FxOpCall names (a checked handle, lent for one call of a custom
// op's kernel or shape function): its bound arguments.
template <>
struct HostObject<FxOpCall> : HandleSlot {
  OpArgs* args = nullptr;
  std::string target;
  mutable std::deque<std::string> dtype_names;  // stable c_str()s
};
using OpCall = HostObject<FxOpCall>;

namespace {

Registrar& registrar_of(FxRegistrar* r) {
  return const_cast<Registrar&>(*require(unwrap_object(r), "registrar"));
}
const Registrar& registrar_of(const FxRegistrar* r) {
  return *require(unwrap_object(r), "registrar");
}
const OpCall& call_of(const FxOpCall* call) {
  return *require(unwrap_object(call), "call");
}

}  // namespace

const std::string& registrar_plugin(const FxRegistrar* r) {
  return registrar_of(r).plugin;
}
uint32_t registrar_api_version(const FxRegistrar* r) {
  return registrar_of(r).api_version;
}

namespace {

struct LeafRule {
  FxLeafModuleFn fn;
  void* user_data;
};

struct Extensions {
  std::mutex mutex;
  std::vector<std::shared_ptr<const void>> resident;  // plugins kept loaded
  absl::flat_hash_set<std::string> registered;        // sha256 or address
  std::vector<LeafRule> leaf_rules;
};

Extensions& extensions() {
  static auto* e = new Extensions();
  return *e;
}

size_t param_index(const OpCall& call, const char* name) {
  require(name, "name");
  for (size_t i = 0; i < call.args->size(); ++i) {
    if (call.args->param_name(i) == name) return i;
  }
  fail(FX_NOT_FOUND,
       cat("custom op '", call.target, "' has no parameter '", name, "'"));
}

const at::Tensor& tensor_param(const OpCall& call, const char* name) {
  size_t i = param_index(call, name);
  if (!(*call.args)[i].isTensor()) {
    fail(FX_INVALID_ARGUMENT, cat("argument '", name, "' of custom op '",
                                  call.target, "' is not a tensor"));
  }
  return (*call.args)[i].toTensor();
}

DLDataType dl_dtype(const at::Tensor& t) { return at::getDLDataType(t); }

// A custom op on meta tensors: an empty meta tensor of the shape and dtype
// its shape function gives.
c10::IValue run_shape_function(const FxCustomOp& op, const OpCall& call,
                               uint32_t version) {
  if (op.shape == nullptr) {
    throw FxError(cat("custom op '", op.target,
                      "' has no shape function, so it cannot run on meta "
                      "tensors"));
  }
  FxTensorSpec spec{};
  spec.struct_size = sizeof(FxTensorSpec);
  ScopedObject<FxOpCall> lent(call);
  FxStatus* status = op.shape(api(version), lent.handle(), op.user_data, &spec);
  if (status != nullptr) {
    std::string message = take_status(status).message;
    throw FxError(cat("the shape function of custom op '", op.target,
                      "' failed: ", message));
  }
  if (spec.ndim < 0 || spec.ndim > FX_MAX_DIMS) {
    throw FxError(cat("the shape function of custom op '", op.target,
                      "' returned ", spec.ndim, " dimensions"));
  }
  return at::empty(std::vector<int64_t>(spec.shape, spec.shape + spec.ndim),
                   at::TensorOptions()
                       .dtype(at::toScalarType(spec.dtype))
                       .device(at::kMeta));
}

// The registered kernel of a plugin's custom op.
// `version`: the table version the op's plugin is handed.
c10::IValue run_custom_op(const FxCustomOp& op, OpArgs& args,
                          uint32_t version) {
  OpCall call;
  call.args = &args;
  call.target = op.target;
  bool meta = false;
  for (size_t i = 0; i < args.size(); ++i) {
    meta = meta || (args[i].isTensor() && args[i].toTensor().is_meta());
  }
  if (meta) return run_shape_function(op, call, version);
  DLManagedTensor* out = nullptr;
  ScopedObject<FxOpCall> lent(call);
  FxStatus* status = op.kernel(api(version), lent.handle(), op.user_data, &out);
  if (status != nullptr) {
    std::string message = take_status(status).message;
    if (out != nullptr && out->deleter) out->deleter(out);
    throw FxError(cat("custom op '", op.target, "' failed: ", message));
  }
  if (out == nullptr) {
    throw FxError(cat("custom op '", op.target, "' returned no tensor"));
  }
  return at::fromDLPack(out);
}

void register_custom_op(const Registrar* r, const FxCustomOp* op) {
  require(op, "op");
  if (op->target == nullptr || *op->target == '\0' || op->kernel == nullptr) {
    fail(FX_INVALID_ARGUMENT,
         cat("plugin '", r->plugin,
             "': a custom op needs a target and a kernel"));
  }
  // A hand-written entry or the ATen operator the target names.
  if (OpRegistry::global().resolve(Opcode::kCallFunction, op->target)) {
    fail(FX_FAILED_PRECONDITION,
         cat("plugin '", r->plugin, "' registers custom op '", op->target,
             "', but that target already has a kernel"));
  }
  FxCustomOp copy = *op;
  std::string target = op->target;
  copy.target = nullptr;  // points into the plugin; keep our own copy
  try {
    OpRegistry::global().add(
        Opcode::kCallFunction, target, op->signature ? op->signature : "",
        [copy, target, version = r->api_version](OpArgs& args) mutable {
          copy.target = target.c_str();
          return run_custom_op(copy, args, version);
        });
  } catch (const FxError& e) {
    fail(FX_INVALID_ARGUMENT,
         cat("plugin '", r->plugin, "', custom op '", target, "': ", e.what()));
  }
}

// The canonical name of the operator a plugin names, or FX_NOT_FOUND.
std::string capture_op_name(const Registrar* r, const char* op,
                            const char* what) {
  require(op, "op");
  try {
    return capture::canonical_op_name(op);
  } catch (const FxError& e) {
    fail(FX_NOT_FOUND, cat("plugin '", r->plugin, "' registers ", what, " '",
                           op, "': ", e.what()));
  }
}

// Stages `op` for make_fx: FX_FAILED_PRECONDITION when it is taken (by
// another plugin, or by this one already).
void stage_capture_extension(Registrar* r, std::string name,
                             Decomposition decomposition) {
  for (const auto& staged : r->capture) {
    if (staged.op == name) {
      fail(FX_FAILED_PRECONDITION, cat("plugin '", r->plugin, "' registers ",
                                       name, " for make_fx twice"));
    }
  }
  try {
    capture::check_unregistered(name, r->plugin);
  } catch (const FxError& e) {
    fail(FX_FAILED_PRECONDITION, e.what());
  }
  r->capture.push_back({std::move(name), std::move(decomposition)});
}

void register_decomposition(Registrar* r, const char* op,
                            const FxGraph* replacement) {
  std::string name = capture_op_name(r, op, "a decomposition of");
  const Graph* graph = unwrap(require(replacement, "replacement"));
  Decomposition decomposition;
  try {
    decomposition = capture::graph_decomposition(name, *graph);
  } catch (const FxError& e) {
    fail(FX_INVALID_ARGUMENT,
         cat("plugin '", r->plugin, "' registers a decomposition of '", name,
             "': ", e.what()));
  }
  stage_capture_extension(r, std::move(name), std::move(decomposition));
}

void register_leaf_op(Registrar* r, const char* op) {
  stage_capture_extension(r, capture_op_name(r, op, "the leaf operator"),
                          nullptr);
}

// RegisterCustomOp, RegisterLeafModuleRule; RegisterDecomposition,
// RegisterLeafOp (version 4).
void fill_registration_entries(FxApi& t) {
  t.RegisterDecomposition = [](FxRegistrar* r, const char* op,
                               const FxGraph* replacement) {
    return guarded("RegisterDecomposition", [&] {
      register_decomposition(&registrar_of(r), op, replacement);
    });
  };
  t.RegisterLeafOp = [](FxRegistrar* r, const char* op) {
    return guarded("RegisterLeafOp",
                   [&] { register_leaf_op(&registrar_of(r), op); });
  };
  t.RegisterCustomOp = [](FxRegistrar* r, const FxCustomOp* op) {
    return guarded("RegisterCustomOp",
                   [&] { register_custom_op(&registrar_of(r), op); });
  };
  t.RegisterLeafModuleRule = [](FxRegistrar* r, FxLeafModuleFn fn,
                                void* user_data) {
    return guarded("RegisterLeafModuleRule", [&] {
      registrar_of(r);  // refuses one that is not lent now
      require(fn, "is_leaf");
      Extensions& e = extensions();
      std::lock_guard<std::mutex> lock(e.mutex);
      e.leaf_rules.push_back({fn, user_data});
    });
  };
}

// The metadata of a tensor argument (its dtype name kept alive by `call`).
FxTensorMeta call_meta_of(const FxOpCall* handle, const char* name) {
  const OpCall& call = call_of(handle);
  const at::Tensor& x = tensor_param(call, name);
  FxTensorMeta meta{};
  meta.ndim = static_cast<int32_t>(x.dim());
  meta.shape = x.sizes().data();
  meta.strides = x.strides().data();
  meta.dtype = dl_dtype(x);
  call.dtype_names.push_back(dtype_name(x.scalar_type()));
  meta.dtype_name = call.dtype_names.back().c_str();
  meta.memory_format = "";
  meta.requires_grad = x.requires_grad();
  meta.qscheme = "";
  meta.axis = -1;
  return meta;
}

FxStatus* call_tensor_meta(const FxOpCall* call, const char* name,
                           FxTensorMeta* out) {
  return guarded("CallTensorMeta", [&] {
    FxTensorMeta meta = call_meta_of(call, name);
    write_tensor_meta(meta, require(out, "out"), kTensorMetaV1Size);
  });
}

FxStatus* call_tensor_meta2(const FxOpCall* call, const char* name,
                            FxTensorMeta* out) {
  return guarded("CallTensorMeta2", [&] {
    size_t size = declared_tensor_meta_size(out);
    write_tensor_meta(call_meta_of(call, name), out, size);
  });
}

// CallHasArg .. CallFloatArg.
void fill_call_entries(FxApi& t) {
  t.CallHasArg = [](const FxOpCall* handle, const char* name) -> int {
    const OpCall* call = peek_object(handle);
    if (call == nullptr || name == nullptr) return 0;
    for (size_t i = 0; i < call->args->size(); ++i) {
      if (call->args->param_name(i) == name) return !call->args->is_none(i);
    }
    return 0;
  };
  t.CallTensorArg = [](const FxOpCall* call, const char* name,
                       DLManagedTensor** out) {
    return guarded("CallTensorArg", [&] {
      const at::Tensor& x = tensor_param(call_of(call), name);
      require(out, "out");
      if (x.is_meta()) {
        fail(FX_FAILED_PRECONDITION, "a meta tensor has no data");
      }
      *out = at::toDLPack(x.detach());
    });
  };
  t.CallTensorMeta = call_tensor_meta;
  t.CallTensorMeta2 = call_tensor_meta2;
  t.CallIntArg = [](const FxOpCall* call, const char* name, int64_t* out) {
    return guarded("CallIntArg", [&] {
      const OpCall& c = call_of(call);
      *require(out, "out") = c.args->to_int(param_index(c, name));
    });
  };
  t.CallFloatArg = [](const FxOpCall* call, const char* name, double* out) {
    return guarded("CallFloatArg", [&] {
      const OpCall& c = call_of(call);
      *require(out, "out") = c.args->to_double(param_index(c, name));
    });
  };
}

}  // namespace

void fill_extension_entries(FxApi& t) {
  fill_registration_entries(t);
  fill_call_entries(t);
}

}  // namespace internal

absl::Status register_extensions(const FxPluginInfo& info,
                                 std::string_view origin,
                                 std::string_view sha256,
                                 std::shared_ptr<const void> keep_alive) {
  if (info.register_extensions == nullptr) return absl::OkStatus();
  internal::Extensions& e = internal::extensions();
  {
    std::lock_guard<std::mutex> lock(e.mutex);
    std::string key = sha256.empty()
                          ? cat("built in ", reinterpret_cast<uintptr_t>(&info))
                          : std::string(sha256);
    if (!e.registered.insert(std::move(key)).second) return absl::OkStatus();
    e.resident.push_back(std::move(keep_alive));
  }
  internal::Registrar registrar;
  registrar.origin = origin;
  registrar.plugin = info.name;
  registrar.api_version = info.api_version;
  internal::ScopedObject<FxRegistrar> lent(registrar);
  auto* handle = const_cast<FxRegistrar*>(lent.handle());
  FxStatus* status = nullptr;
  try {
    status = info.register_extensions(api(info.api_version), handle);
  } catch (...) {
    return absl::InternalError(cat("plugin '", info.name, "' (", origin,
                                   "): an exception escaped "
                                   "register_extensions"));
  }
  if (status != nullptr) {
    std::string message = take_status(status).message;
    return absl::FailedPreconditionError(
        cat("plugin '", info.name, "' (", origin,
            ") failed to register its extensions: ", message));
  }
  try {
    capture::register_capture_extensions(registrar.capture, info.name);
  } catch (const FxError& e) {
    return absl::FailedPreconditionError(
        cat("plugin '", info.name, "' (", origin,
            ") failed to register its extensions: ", e.what()));
  }
  return absl::OkStatus();
}

std::optional<bool> leaf_module_rule(std::string_view module_type,
                                     std::string_view qualified_name) {
  std::vector<internal::LeafRule> rules;
  {
    internal::Extensions& e = internal::extensions();
    std::lock_guard<std::mutex> lock(e.mutex);
    rules = e.leaf_rules;
  }
  std::string type(module_type), name(qualified_name);
  for (const internal::LeafRule& rule : rules) {
    int verdict = rule.fn(type.c_str(), name.c_str(), rule.user_data);
    if (verdict >= 0) return verdict != 0;
  }
  return std::nullopt;
}

}  // namespace fx::host
