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
#include "plugin_api/capi/api_internal.h"
#include "plugin_api/capi/extensions.h"

// Registration in progress: who registers (for messages).
struct FxRegistrar {
  std::string origin;
  std::string plugin;
  uint32_t api_version;  // of the table the plugin's functions are handed
  // make_fx's decompositions and leaf ops, registered together when
  // register_extensions succeeds (none when it fails).
  std::vector<fx::capture::CaptureExtension> capture = {};
};

// A custom op call: its bound arguments.
struct FxOpCall {
  fx::OpArgs* args;
  std::string target;
  mutable std::deque<std::string> dtype_names;  // stable c_str()s
};

namespace fx::host {
namespace internal {

const std::string& registrar_plugin(const FxRegistrar* r) { return r->plugin; }
uint32_t registrar_api_version(const FxRegistrar* r) { return r->api_version; }

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

size_t param_index(const FxOpCall* call, const char* name) {
  require(call, "call");
  require(name, "name");
  for (size_t i = 0; i < call->args->size(); ++i) {
    if (call->args->param_name(i) == name) return i;
  }
  fail(FX_NOT_FOUND,
       cat("custom op '", call->target, "' has no parameter '", name, "'"));
}

const at::Tensor& tensor_param(const FxOpCall* call, const char* name) {
  size_t i = param_index(call, name);
  if (!(*call->args)[i].isTensor()) {
    fail(FX_INVALID_ARGUMENT, cat("argument '", name, "' of custom op '",
                                  call->target, "' is not a tensor"));
  }
  return (*call->args)[i].toTensor();
}

DLDataType dl_dtype(const at::Tensor& t) { return at::getDLDataType(t); }

// A custom op on meta tensors: an empty meta tensor of the shape and dtype
// its shape function gives.
c10::IValue run_shape_function(const FxCustomOp& op, FxOpCall& call,
                               uint32_t version) {
  if (op.shape == nullptr) {
    throw FxError(cat("custom op '", op.target,
                      "' has no shape function, so it cannot run on meta "
                      "tensors"));
  }
  FxTensorSpec spec{};
  spec.struct_size = sizeof(FxTensorSpec);
  ScopedV1Handle live(&call, V1HandleKind::kOpCall, version);
  FxStatus* status = op.shape(api(version), &call, op.user_data, &spec);
  if (status != nullptr) {
    std::string message = status->message;
    delete status;
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
  FxOpCall call{&args, op.target, {}};
  bool meta = false;
  for (size_t i = 0; i < args.size(); ++i) {
    meta = meta || (args[i].isTensor() && args[i].toTensor().is_meta());
  }
  if (meta) return run_shape_function(op, call, version);
  DLManagedTensor* out = nullptr;
  ScopedV1Handle live(&call, V1HandleKind::kOpCall, version);
  FxStatus* status = op.kernel(api(version), &call, op.user_data, &out);
  if (status != nullptr) {
    std::string message = status->message;
    delete status;
    if (out != nullptr && out->deleter) out->deleter(out);
    throw FxError(cat("custom op '", op.target, "' failed: ", message));
  }
  if (out == nullptr) {
    throw FxError(cat("custom op '", op.target, "' returned no tensor"));
  }
  return at::fromDLPack(out);
}

void register_custom_op(FxRegistrar* r, const FxCustomOp* op) {
  require(r, "registrar");
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
std::string capture_op_name(const FxRegistrar* r, const char* op,
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
void stage_capture_extension(FxRegistrar* r, std::string name,
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

void register_decomposition(FxRegistrar* r, const char* op,
                            const FxGraph* replacement) {
  require(r, "registrar");
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

void register_leaf_op(FxRegistrar* r, const char* op) {
  require(r, "registrar");
  stage_capture_extension(r, capture_op_name(r, op, "the leaf operator"),
                          nullptr);
}

// RegisterCustomOp, RegisterLeafModuleRule; RegisterDecomposition,
// RegisterLeafOp (version 4).
void fill_registration_entries(FxApi& t) {
  t.RegisterDecomposition = [](FxRegistrar* r, const char* op,
                               const FxGraph* replacement) {
    return guarded("RegisterDecomposition",
                   [&] { register_decomposition(r, op, replacement); });
  };
  t.RegisterLeafOp = [](FxRegistrar* r, const char* op) {
    return guarded("RegisterLeafOp", [&] { register_leaf_op(r, op); });
  };
  t.RegisterCustomOp = [](FxRegistrar* r, const FxCustomOp* op) {
    return guarded("RegisterCustomOp", [&] { register_custom_op(r, op); });
  };
  t.RegisterLeafModuleRule = [](FxRegistrar* r, FxLeafModuleFn fn,
                                void* user_data) {
    return guarded("RegisterLeafModuleRule", [&] {
      require(r, "registrar");
      require(fn, "is_leaf");
      Extensions& e = extensions();
      std::lock_guard<std::mutex> lock(e.mutex);
      e.leaf_rules.push_back({fn, user_data});
    });
  };
}

// The metadata of a tensor argument (its dtype name kept alive by `call`).
FxTensorMeta call_meta_of(const FxOpCall* call, const char* name) {
  const at::Tensor& x = tensor_param(call, name);
  FxTensorMeta meta{};
  meta.ndim = static_cast<int32_t>(x.dim());
  meta.shape = x.sizes().data();
  meta.strides = x.strides().data();
  meta.dtype = dl_dtype(x);
  call->dtype_names.push_back(dtype_name(x.scalar_type()));
  meta.dtype_name = call->dtype_names.back().c_str();
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
  t.CallHasArg = [](const FxOpCall* call, const char* name) -> int {
    if (call == nullptr || name == nullptr) return 0;
    for (size_t i = 0; i < call->args->size(); ++i) {
      if (call->args->param_name(i) == name) return !call->args->is_none(i);
    }
    return 0;
  };
  t.CallTensorArg = [](const FxOpCall* call, const char* name,
                       DLManagedTensor** out) {
    return guarded("CallTensorArg", [&] {
      const at::Tensor& x = tensor_param(call, name);
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
      *require(out, "out") = call->args->to_int(param_index(call, name));
    });
  };
  t.CallFloatArg = [](const FxOpCall* call, const char* name, double* out) {
    return guarded("CallFloatArg", [&] {
      *require(out, "out") = call->args->to_double(param_index(call, name));
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
  FxRegistrar registrar{std::string(origin), info.name, info.api_version};
  internal::ScopedV1Handle live(&registrar, internal::V1HandleKind::kRegistrar,
                                info.api_version);
  FxStatus* status = nullptr;
  try {
    status = info.register_extensions(api(info.api_version), &registrar);
  } catch (...) {
    return absl::InternalError(cat("plugin '", info.name, "' (", origin,
                                   "): an exception escaped "
                                   "register_extensions"));
  }
  if (status != nullptr) {
    std::string message = status->message;
    delete status;
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
