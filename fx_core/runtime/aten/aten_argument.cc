#include "fx_core/runtime/aten/aten_argument.h"

#include <ATen/ATen.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/jit_type.h>

#include <optional>
#include <utility>
#include <vector>

#include "fx_core/runtime/value.h"

namespace fx {

namespace {

AtenType list_type(const c10::TypePtr& element) {
  switch (element->kind()) {
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType:
      return AtenType::kIntList;
    case c10::TypeKind::FloatType:
      return AtenType::kFloatList;
    case c10::TypeKind::NumberType:
      return AtenType::kScalarList;
    case c10::TypeKind::BoolType:
      return AtenType::kBoolList;
    case c10::TypeKind::TensorType:
      return AtenType::kTensorList;
    case c10::TypeKind::StringType:
      return AtenType::kStringList;
    case c10::TypeKind::OptionalType: {
      const auto& inner = element->expectRef<c10::OptionalType>();
      return inner.getElementType()->kind() == c10::TypeKind::TensorType
                 ? AtenType::kOptionalTensorList
                 : AtenType::kUnsupported;
    }
    default:
      return AtenType::kUnsupported;
  }
}

AtenType scalar_type(const c10::TypePtr& type) {
  switch (type->kind()) {
    case c10::TypeKind::TensorType:
      return AtenType::kTensor;
    case c10::TypeKind::NumberType:
      return AtenType::kScalar;
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType:
      return AtenType::kInt;
    case c10::TypeKind::FloatType:
      return AtenType::kFloat;
    case c10::TypeKind::BoolType:
      return AtenType::kBool;
    case c10::TypeKind::StringType:
      return AtenType::kString;
    case c10::TypeKind::ScalarTypeType:
      return AtenType::kScalarType;
    case c10::TypeKind::LayoutType:
      return AtenType::kLayout;
    case c10::TypeKind::MemoryFormatType:
      return AtenType::kMemoryFormat;
    case c10::TypeKind::DeviceObjType:
      return AtenType::kDevice;
    case c10::TypeKind::GeneratorType:
      return AtenType::kGenerator;
    case c10::TypeKind::ListType:
      return list_type(type->expectRef<c10::ListType>().getElementType());
    default:
      return AtenType::kUnsupported;
  }
}

bool is_zero_dim(const c10::IValue& v) {
  return v.isTensor() && v.toTensor().dim() == 0;
}

bool is_python_int(const c10::IValue& v) {
  return v.isInt() ||
         (is_zero_dim(v) && at::isIntegralType(v.toTensor().scalar_type(),
                                               /*includeBool=*/false));
}

bool is_number(const c10::IValue& v) {
  return v.isInt() || v.isDouble() || v.isBool();
}

template <typename Pred>
bool all_elements(const c10::IValue& v, Pred pred) {
  if (!is_sequence(v)) return false;
  for (const c10::IValue& item : sequence_elements(v)) {
    if (!pred(item)) return false;
  }
  return true;
}

bool accepts_list(const AtenParam& p, const c10::IValue& v) {
  switch (p.type) {
    case AtenType::kIntList:
      return (p.size > 0 && is_python_int(v)) || all_elements(v, is_python_int);
    case AtenType::kFloatList:
    case AtenType::kScalarList:
      return all_elements(v, [](const c10::IValue& i) {
        return i.isDouble() || i.isInt() || i.isBool();
      });
    case AtenType::kBoolList:
      return all_elements(v, [](const c10::IValue& i) { return i.isBool(); });
    case AtenType::kTensorList:
      return all_elements(v, [](const c10::IValue& i) { return i.isTensor(); });
    case AtenType::kOptionalTensorList:
      return all_elements(
          v, [](const c10::IValue& i) { return i.isTensor() || i.isNone(); });
    case AtenType::kStringList:
      return all_elements(v, [](const c10::IValue& i) { return i.isString(); });
    default:
      return false;
  }
}

template <typename T, typename Fn>
c10::IValue typed_list(const c10::IValue& v, Fn element) {
  c10::List<T> out;
  for (const c10::IValue& item : sequence_elements(v)) {
    out.push_back(element(item));
  }
  return out;
}

c10::IValue convert_list(const AtenParam& p, const c10::IValue& v) {
  switch (p.type) {
    case AtenType::kIntList:
      if (!is_sequence(v)) {
        return c10::List<int64_t>(std::vector<int64_t>(
            p.size, v.isInt() ? v.toInt() : v.toTensor().item<int64_t>()));
      }
      return typed_list<int64_t>(v, [](const c10::IValue& i) {
        return i.isInt() ? i.toInt() : i.toTensor().item<int64_t>();
      });
    case AtenType::kFloatList:
      return typed_list<double>(v, [](const c10::IValue& i) {
        return i.isDouble()
                   ? i.toDouble()
                   : static_cast<double>(i.isInt() ? i.toInt() : i.toBool());
      });
    case AtenType::kScalarList: {
      c10::impl::GenericList out(c10::NumberType::get());
      for (const c10::IValue& i : sequence_elements(v)) {
        out.push_back(i);
      }
      return out;
    }
    case AtenType::kBoolList:
      return typed_list<bool>(v,
                              [](const c10::IValue& i) { return i.toBool(); });
    case AtenType::kTensorList:
      return typed_list<at::Tensor>(
          v, [](const c10::IValue& i) { return i.toTensor(); });
    case AtenType::kOptionalTensorList:
      return typed_list<c10::optional<at::Tensor>>(
          v, [](const c10::IValue& i) -> c10::optional<at::Tensor> {
            if (i.isNone()) return c10::nullopt;
            return i.toTensor();
          });
    case AtenType::kStringList:
      return typed_list<std::string>(
          v, [](const c10::IValue& i) { return i.toStringRef(); });
    default:
      return v;
  }
}

c10::IValue wrapped_number(const c10::IValue& v) {
  at::Scalar s = v.isInt()      ? at::Scalar(v.toInt())
                 : v.isDouble() ? at::Scalar(v.toDouble())
                                : at::Scalar(v.toBool());
  at::Tensor t = at::scalar_to_tensor(s);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

}  // namespace

AtenParam make_aten_param(const c10::Argument& arg, std::string python_name) {
  AtenParam p;
  p.name = std::move(python_name);
  p.type_str = arg.real_type()->annotation_str();
  c10::TypePtr type = arg.real_type();
  if (type->kind() == c10::TypeKind::OptionalType) {
    p.optional = true;
    type = type->expectRef<c10::OptionalType>().getElementType();
  }
  p.type = scalar_type(type);
  p.size = arg.N().value_or(0);
  p.keyword_only = arg.kwarg_only();
  // Not `p.default_value = arg.default_value()`: an empty c10::optional
  // converts to an IValue (None), which would give every argument a default.
  if (arg.default_value().has_value()) p.default_value = *arg.default_value();
  return p;
}

bool aten_accepts(const AtenParam& p, const c10::IValue& v,
                  bool numbers_as_tensors) {
  if (v.isNone()) return p.optional;
  switch (p.type) {
    case AtenType::kTensor:
      return v.isTensor() || (numbers_as_tensors && is_number(v));
    case AtenType::kScalar:
      return is_number(v) || (is_zero_dim(v) && !v.toTensor().requires_grad());
    case AtenType::kInt:
      return is_python_int(v);
    case AtenType::kFloat:
      return is_number(v) || is_zero_dim(v);
    case AtenType::kBool:
      return v.isBool() ||
             (is_zero_dim(v) && v.toTensor().scalar_type() == at::kBool);
    case AtenType::kString:
      return v.isString();
    // An int naming no enumerator would be cast unchecked by LibTorch's
    // boxed kernels (value.cc): no overload accepts it.
    case AtenType::kScalarType:
      return v.isInt() && dtype_from_int(v.toInt());
    case AtenType::kLayout:
      return v.isInt() && layout_from_int(v.toInt());
    case AtenType::kMemoryFormat:
      return v.isInt() && memory_format_from_int(v.toInt());
    case AtenType::kDevice:
      return v.isDevice() || v.isString() || v.isInt();
    case AtenType::kGenerator:
    case AtenType::kUnsupported:
      return false;
    default:
      return accepts_list(p, v);
  }
}

c10::IValue aten_convert(const AtenParam& p, c10::IValue v) {
  if (v.isNone()) return v;
  switch (p.type) {
    case AtenType::kTensor:
      return v.isTensor() ? std::move(v) : wrapped_number(v);
    case AtenType::kScalar:
      return v.isTensor() ? c10::IValue(v.toTensor().item()) : std::move(v);
    case AtenType::kInt:
      return v.isTensor() ? c10::IValue(v.toTensor().item<int64_t>())
                          : std::move(v);
    case AtenType::kFloat:
      if (v.isTensor()) return v.toTensor().item<double>();
      if (v.isInt()) return static_cast<double>(v.toInt());
      if (v.isBool()) return v.toBool() ? 1.0 : 0.0;
      return v;
    case AtenType::kBool:
      return v.isTensor() ? c10::IValue(v.toTensor().item<bool>())
                          : std::move(v);
    case AtenType::kDevice:
      if (v.isString()) return c10::Device(v.toStringRef());
      if (v.isInt()) {
        return c10::Device(c10::DeviceType::CUDA,
                           static_cast<c10::DeviceIndex>(v.toInt()));
      }
      return v;
    case AtenType::kIntList:
    case AtenType::kFloatList:
    case AtenType::kScalarList:
    case AtenType::kBoolList:
    case AtenType::kTensorList:
    case AtenType::kOptionalTensorList:
    case AtenType::kStringList:
      return convert_list(p, v);
    default:
      return v;
  }
}

}  // namespace fx
