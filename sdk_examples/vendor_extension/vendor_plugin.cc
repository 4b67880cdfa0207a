// A vendor's plugin that extends tracing and the runtime, loaded by the host:
//
//  - a custom op, `my_vendor.fused_gelu(input, alpha=1.0)` = alpha *
//    gelu(input) (erf form), with a kernel over DLPack float32 data and a
//    shape function (meta runs and shape_prop use it: no data needed);
//  - a leaf-module rule: modules of type `my_vendor.FusedBlock` are leaves
//    (the tracer records call_module instead of tracing through them);
//  - a pass, `vendor_fuse_gelu`, that retargets torch.fx's GELU calls
//    (F.gelu, approximate='none') to the vendor op.
//
// Built from plugin_api/include alone.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "fx/plugin_api.hpp"

namespace {

constexpr const char* kFusedGelu = "my_vendor.fused_gelu";

FxStatus* fused_gelu_kernel(const FxApi* api, const FxOpCall* call, void*,
                            DLManagedTensor** out) {
  DLManagedTensor* in = nullptr;
  double alpha = 1.0;
  FxStatus* s = api->CallTensorArg(call, "input", &in);
  if (!s) s = api->CallFloatArg(call, "alpha", &alpha);
  if (s) {
    if (in && in->deleter) in->deleter(in);
    return s;
  }
  fxp::Tensor x(in);
  if (x.dl().dtype.code != kDLFloat || x.dl().dtype.bits != 32 ||
      !x.is_contiguous()) {
    return api->CreateStatus(FX_INVALID_ARGUMENT,
                             "my_vendor.fused_gelu takes a contiguous "
                             "float32 tensor");
  }
  fxp::Tensor y = fxp::make_tensor(x.shape(), fxp::kFloat32);
  const float* src = x.data<float>();
  float* dst = y.mutable_data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    double v = src[i];
    dst[i] =
        static_cast<float>(alpha * 0.5 * v * (1.0 + std::erf(v * M_SQRT1_2)));
  }
  *out = y.release();
  return nullptr;
}

FxStatus* fused_gelu_shape(const FxApi* api, const FxOpCall* call, void*,
                           FxTensorSpec* out) {
  FxTensorMeta m;
  FxStatus* s = api->CallTensorMeta(call, "input", &m);
  if (s) return s;
  if (m.ndim > FX_MAX_DIMS) {
    return api->CreateStatus(FX_INVALID_ARGUMENT, "too many dimensions");
  }
  out->ndim = m.ndim;
  for (int32_t i = 0; i < m.ndim; ++i) out->shape[i] = m.shape[i];
  out->dtype = m.dtype;
  return nullptr;
}

int fused_block_is_leaf(const char* module_type, const char*, void*) {
  return std::strcmp(module_type, "my_vendor.FusedBlock") == 0 ? 1 : -1;
}

FxStatus* register_extensions(const FxApi* api, FxRegistrar* registrar) {
  static const FxCustomOp fused_gelu = {kFusedGelu, "input, alpha=1.0",
                                        fused_gelu_kernel, fused_gelu_shape,
                                        nullptr};
  FxStatus* s = api->RegisterCustomOp(registrar, &fused_gelu);
  if (s) return s;
  return api->RegisterLeafModuleRule(registrar, fused_block_is_leaf, nullptr);
}

bool vendor_fuse_gelu(fxp::Graph& g, const fxp::Options&) {
  bool changed = false;
  for (const char* target : {"torch._C._nn.gelu", "torch.nn.functional.gelu"}) {
    for (fxp::Node n : g.find_nodes(FX_OP_CALL_FUNCTION, target)) {
      fxp::ArgView approximate = n.kwarg("approximate");
      if (!approximate && n.num_args() > 1) approximate = n.arg(1);
      if (approximate && approximate.as_string() != "none") continue;
      auto guard = g.inserting_before(n);
      fxp::Node fused = g.call_function(kFusedGelu, {fxp::Arg(n.arg(0))});
      n.replace_all_uses_with(fused);
      g.erase_node(n);
      changed = true;
    }
  }
  return changed;
}

}  // namespace

FXP_PLUGIN_WITH_EXTENSIONS(
    "my_vendor", "1.0", register_extensions,
    fxp::pass<vendor_fuse_gelu>("vendor_fuse_gelu",
                                "F.gelu -> my_vendor.fused_gelu")
        .invalidates({"tensor_meta"}))
