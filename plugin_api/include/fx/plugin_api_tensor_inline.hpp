// The inline bodies of the wrapper's runtime data: Tensor (an owned DLPack
// tensor), make_tensor and RuntimeValue (a value a run produced).
//
// Part of the wrapper declared (and documented) in fx/plugin_api.hpp,
// which includes it through fx/plugin_api_inline.hpp. Include
// fx/plugin_api.hpp, not this file. Every definition here is inline (or a
// template), so the wrapper stays header-only.
#ifndef FX_PLUGIN_API_TENSOR_INLINE_HPP_
#define FX_PLUGIN_API_TENSOR_INLINE_HPP_

// Makes this header self-contained for tools that parse it alone; when
// plugin_api.hpp is the includer its guard makes this a no-op.
#include "fx/plugin_api.hpp"

namespace fxp {

// ------------------------------------------------------------------- Tensor

inline Tensor& Tensor::operator=(Tensor&& o) noexcept {
  if (this != &o) {
    reset();
    t_ = std::exchange(o.t_, nullptr);
  }
  return *this;
}

inline Tensor::~Tensor() { reset(); }

inline void Tensor::reset() {
  if (t_ && t_->deleter) t_->deleter(t_);
  t_ = nullptr;
}

inline std::vector<int64_t> Tensor::shape() const {
  return std::vector<int64_t>(dl().shape, dl().shape + dl().ndim);
}

inline int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int i = 0; i < dl().ndim; ++i) n *= dl().shape[i];
  return n;
}

inline bool Tensor::is_contiguous() const {
  if (dl().strides == nullptr) return true;
  int64_t step = 1;
  for (int i = dl().ndim - 1; i >= 0; --i) {
    if (dl().shape[i] != 1 && dl().strides[i] != step) return false;
    step *= dl().shape[i];
  }
  return true;
}

inline double Tensor::float_at(int64_t i) const {
  return dl().dtype.bits == 64 ? data<double>()[i] : data<float>()[i];
}

namespace detail {
struct OwnedTensorStorage {
  DLManagedTensor managed;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
};
}  // namespace detail

inline Tensor make_tensor(const std::vector<int64_t>& shape, DLDataType dtype) {
  auto* s = new detail::OwnedTensorStorage();
  s->shape = shape;
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  s->bytes.assign(
      static_cast<size_t>(count) * ((dtype.bits + 7) / 8) * dtype.lanes + 1, 0);
  DLTensor& t = s->managed.dl_tensor;
  t.data = s->bytes.data();
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = static_cast<int32_t>(shape.size());
  t.dtype = dtype;
  t.shape = s->shape.data();
  t.strides = nullptr;
  t.byte_offset = 0;
  s->managed.manager_ctx = s;
  s->managed.deleter = [](DLManagedTensor* self) {
    delete static_cast<detail::OwnedTensorStorage*>(self->manager_ctx);
  };
  return Tensor(&s->managed);
}

// ------------------------------------------------------------- RuntimeValue

inline FxValueKind RuntimeValue::kind() const { return api()->ValueKind(v_); }

inline bool RuntimeValue::is_tensor() const {
  return kind() == FX_VALUE_TENSOR;
}

inline std::string RuntimeValue::type_name() const {
  return api()->ValueTypeName(v_);
}

inline FxTensorMeta RuntimeValue::tensor_meta() const {
  FxTensorMeta m;
  FX_TENSOR_META_INIT(m);
  // Version 1 hosts fill the same fields through the version-1 entry.
  check(api()->version >= 2 ? api()->ValueTensorMeta2(v_, &m)
                            : api()->ValueTensorMeta(v_, &m));
  return m;
}

inline Tensor RuntimeValue::to_dlpack() const {
  DLManagedTensor* out = nullptr;
  check(api()->ValueToDLPack(v_, &out));
  return Tensor(out);
}

inline int64_t RuntimeValue::as_int() const {
  int64_t out = 0;
  check(api()->ValueGetInt(v_, &out));
  return out;
}

inline double RuntimeValue::as_float() const {
  double out = 0;
  check(api()->ValueGetFloat(v_, &out));
  return out;
}

inline bool RuntimeValue::as_bool() const {
  int out = 0;
  check(api()->ValueGetBool(v_, &out));
  return out != 0;
}

inline size_t RuntimeValue::size() const { return api()->ValueSize(v_); }

inline RuntimeValue RuntimeValue::item(size_t i) const {
  return RuntimeValue(api()->ValueItem(v_, i));
}

inline TensorStorage RuntimeValue::storage() const {
  require_api_version(12, "ValueStorage");
  TensorStorage out{0, 0};
  check(api()->ValueStorage(v_, &out.id, &out.offset));
  return out;
}

}  // namespace fxp

#endif  // FX_PLUGIN_API_TENSOR_INLINE_HPP_
