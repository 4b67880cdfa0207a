// The FxApi entries that read the values GraphRun and GraphEvaluate lend:
// ValueKind .. ValueItem (kinds, scalars, items of tuples and lists),
// ValueTensorMeta(2) (a tensor's metadata, quantization included) and
// ValueStorage (version 12: a run numbers the storages it is asked about).
#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fx_core/runtime/value.h"
#include "host/capi/api_internal.h"
#include "host/capi/run_value.h"
#include "host/handles/wrap.h"

namespace fx::host::internal {
namespace {

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

}  // namespace

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

}  // namespace fx::host::internal
