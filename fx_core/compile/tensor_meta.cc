#include "fx_core/compile/tensor_meta.h"

namespace fx {

TensorMeta TensorMeta::of(const c10::IValue& v) {
  TensorMeta m;
  if (!v.isTensor()) return m;
  const at::Tensor& t = v.toTensor();
  if (!t.defined()) return m;
  m.is_tensor = true;
  m.sizes = t.sizes().vec();
  m.strides =
      t.layout() == c10::kStrided ? t.strides().vec() : std::vector<int64_t>{};
  m.dtype = t.scalar_type();
  m.device = t.device();
  m.plain = t.layout() == c10::kStrided && t.device().is_cpu() &&
            !t.is_quantized() && !t.is_conj() && !t.is_neg() &&
            !t.is_sparse() && !t.is_mkldnn() && t.numel() > 0 &&
            !t.unsafeGetTensorImpl()->is_wrapped_number();
  return m;
}

bool TensorMeta::matches(const at::Tensor& t) const {
  return t.defined() && t.scalar_type() == dtype && t.device() == device &&
         t.layout() == c10::kStrided && t.sizes() == c10::IntArrayRef(sizes) &&
         t.strides() == c10::IntArrayRef(strides) && !t.is_conj() &&
         !t.is_neg();
}

size_t TensorMeta::nbytes() const {
  int64_t span = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return 0;
    span += (sizes[i] - 1) * strides[i];
  }
  return static_cast<size_t>(span) * c10::elementSize(dtype);
}

}  // namespace fx
