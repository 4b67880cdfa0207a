#include "fx_core/capture/symbolic_tensor.h"

#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/core/impl/PyInterpreter.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>
#include <c10/util/Exception.h>

#include <typeinfo>
#include <utility>

namespace fx::capture {

using Kind = CaptureSymNode::Source::Kind;

SymbolicTensorImpl::SymbolicTensorImpl(std::weak_ptr<SymNodeOwner> owner,
                                       at::Tensor meta, Exprs sizes,
                                       Exprs strides)
    : c10::TensorImpl(c10::DispatchKeySet(c10::DispatchKey::CPU), meta.dtype(),
                      c10::Device(c10::kCPU)),
      owner_(std::move(owner)),
      meta_(std::move(meta)),
      size_exprs_(std::move(sizes)),
      stride_exprs_(std::move(strides)) {
  TORCH_INTERNAL_ASSERT(size_exprs_->size() == meta_.dim() &&
                        stride_exprs_->size() == meta_.dim());
  for (const sym::Expr& e : *size_exprs_) {
    has_symbolic_size_ = has_symbolic_size_ || !e.as_integer();
  }
  c10::TensorImpl::set_sizes_and_strides(meta_.sizes(), meta_.strides());
  set_python_dispatch(true);
  set_custom_sizes_strides(SizesStridesPolicy::CustomSizes);
}

c10::SymInt SymbolicTensorImpl::make_int(const sym::Expr& e, int64_t hint,
                                         Kind kind, int64_t dim) const {
  if (e.as_integer()) return c10::SymInt(*e.as_integer());
  CaptureSymNode::Source source;
  source.kind = kind;
  source.tensor = this;
  source.dim = dim;
  return c10::SymInt::toSymInt(
      c10::make_intrusive<CaptureSymNode>(owner_, e, hint, std::move(source)));
}

const std::vector<c10::SymInt>& SymbolicTensorImpl::sym_ints(
    bool strides) const {
  bool& made = strides ? made_strides_ : made_sizes_;
  std::vector<c10::SymInt>& ints = strides ? strides_ : sizes_;
  if (!made) {
    const std::vector<sym::Expr>& exprs =
        strides ? *stride_exprs_ : *size_exprs_;
    ints.reserve(exprs.size());
    for (size_t d = 0; d < exprs.size(); ++d) {
      const auto i = static_cast<int64_t>(d);
      ints.push_back(make_int(exprs[d],
                              strides ? meta_.stride(i) : meta_.size(i),
                              strides ? Kind::kStride : Kind::kSize, i));
    }
    made = true;
  }
  return ints;
}

std::vector<CaptureSymNode*> SymbolicTensorImpl::nodes() const {
  std::vector<CaptureSymNode*> out;
  for (const auto* list : {&sizes_, &strides_}) {
    for (const c10::SymInt& s : *list) {
      if (CaptureSymNode* n = capture_node(s)) out.push_back(n);
    }
  }
  if (numel_) {
    if (CaptureSymNode* n = capture_node(*numel_)) out.push_back(n);
  }
  return out;
}

SymNodeOwner& SymbolicTensorImpl::owner() const {
  std::shared_ptr<SymNodeOwner> owner = owner_.lock();
  TORCH_CHECK(owner != nullptr,
              "fx::make_fx: a symbolic tensor is used after its capture ended");
  return *owner;  // alive: the capture holds the only strong reference
}

sym::GuardRecorder& SymbolicTensorImpl::guards() const {
  return owner().guards();
}

void SymbolicTensorImpl::specialize(const std::vector<sym::Expr>& exprs) const {
  for (const sym::Expr& e : exprs) {
    if (!e.as_integer()) guards().specialize(e);
  }
}

c10::IntArrayRef SymbolicTensorImpl::sizes_custom() const {
  specialize(*size_exprs_);
  return sizes_and_strides_.sizes_arrayref();
}

c10::IntArrayRef SymbolicTensorImpl::strides_custom() const {
  specialize(*stride_exprs_);
  return sizes_and_strides_.strides_arrayref();
}

int64_t SymbolicTensorImpl::numel_custom() const {
  specialize(*size_exprs_);
  return meta_.numel();
}

int64_t SymbolicTensorImpl::storage_offset_custom() const {
  return meta_.storage_offset();
}

int64_t SymbolicTensorImpl::dim_custom() const {
  return static_cast<int64_t>(size_exprs_->size());
}

int64_t SymbolicTensorImpl::size_custom(int64_t d) const {
  d = c10::maybe_wrap_dim(d, dim_custom(), /*wrap_scalar=*/false);
  specialize({(*size_exprs_)[static_cast<size_t>(d)]});
  return meta_.size(d);
}

c10::SymInt SymbolicTensorImpl::sym_size_custom(int64_t d) const {
  d = c10::maybe_wrap_dim(d, dim_custom(), /*wrap_scalar=*/false);
  return sym_ints(false)[static_cast<size_t>(d)];
}

c10::SymIntArrayRef SymbolicTensorImpl::sym_sizes_custom() const {
  return sym_ints(false);
}

c10::SymIntArrayRef SymbolicTensorImpl::sym_strides_custom() const {
  return sym_ints(true);
}

c10::SymInt SymbolicTensorImpl::sym_numel_custom() const {
  if (!numel_) {
    sym::ExprMemo& memo = owner().expr_memo();
    sym::Expr e = sym::Expr::integer(1);
    for (const sym::Expr& s : *size_exprs_) {
      e = memo.apply(sym::ExprMemo::Op::kMul, e, s);
    }
    numel_ = make_int(e, meta_.numel(), Kind::kNumel, 0);
  }
  return *numel_;
}

c10::SymInt SymbolicTensorImpl::sym_storage_offset_custom() const {
  return c10::SymInt(meta_.storage_offset());
}

bool SymbolicTensorImpl::is_contiguous_custom(at::MemoryFormat format) const {
  if (format != at::MemoryFormat::Contiguous) {
    return meta_.is_contiguous(format);
  }
  // 1.13's compute_contiguous on SymInts: each stride of a dimension whose
  // size is not 1 equals the product of the sizes inside it.
  sym::ExprMemo& memo = owner().expr_memo();
  sym::Expr expected = sym::Expr::integer(1);
  for (size_t d = size_exprs_->size(); d-- > 0;) {
    const sym::Expr& size = (*size_exprs_)[d];
    bool one = size.as_integer()
                   ? *size.as_integer() == 1
                   : guards().decide(
                         {sym::Relation::Op::kEq, size, sym::Expr::integer(1)});
    if (one) continue;
    if (!guards().decide(
            {sym::Relation::Op::kEq, (*stride_exprs_)[d], expected})) {
      return false;
    }
    expected = memo.apply(sym::ExprMemo::Op::kMul, expected, size);
  }
  return true;
}

bool SymbolicTensorImpl::is_strides_like_custom(at::MemoryFormat format) const {
  return meta_.unsafeGetTensorImpl()->is_strides_like(format);
}

bool SymbolicTensorImpl::is_non_overlapping_and_dense_custom() const {
  return meta_.is_non_overlapping_and_dense();
}

c10::intrusive_ptr<c10::TensorImpl> SymbolicTensorImpl::shallow_copy_and_detach(
    const c10::VariableVersion& version_counter,
    bool allow_tensor_metadata_change) const {
  // As TensorImpl's: an active torch_dispatch mode makes the copy (make_fx
  // records it as a detach).
  c10::intrusive_ptr<c10::TensorImpl> copy;
  const auto& mode = c10::impl::TorchDispatchModeTLS::get_mode();
  if (mode &&
      !c10::impl::tls_is_dispatch_key_excluded(c10::DispatchKey::Python)) {
    copy = mode->pyinterpreter()->detach(this);
  } else {
    copy = c10::make_intrusive<SymbolicTensorImpl>(owner_, meta_, size_exprs_,
                                                   stride_exprs_);
  }
  if (copy->is_inference()) return copy;
  copy->set_version_counter(version_counter);
  copy->set_allow_tensor_metadata_change(allow_tensor_metadata_change);
  return copy;
}

c10::intrusive_ptr<c10::TensorImpl> SymbolicTensorImpl::shallow_copy_and_detach(
    c10::VariableVersion&& version_counter,
    bool allow_tensor_metadata_change) const {
  return shallow_copy_and_detach(
      static_cast<const c10::VariableVersion&>(version_counter),
      allow_tensor_metadata_change);
}

void SymbolicTensorImpl::shallow_copy_from(
    const c10::intrusive_ptr<c10::TensorImpl>&) {
  TORCH_CHECK(false,
              "fx::make_fx (symbolic): cannot set a symbolic tensor's data");
}

at::Tensor make_symbolic_tensor(std::weak_ptr<SymNodeOwner> owner,
                                at::Tensor meta,
                                SymbolicTensorImpl::Exprs sizes,
                                SymbolicTensorImpl::Exprs strides) {
  return at::Tensor(c10::make_intrusive<SymbolicTensorImpl>(
      std::move(owner), std::move(meta), std::move(sizes), std::move(strides)));
}

at::Tensor make_symbolic_tensor(std::weak_ptr<SymNodeOwner> owner,
                                at::Tensor meta, std::vector<sym::Expr> sizes,
                                std::vector<sym::Expr> strides) {
  using Exprs = std::vector<sym::Expr>;
  return make_symbolic_tensor(
      std::move(owner), std::move(meta),
      std::make_shared<const Exprs>(std::move(sizes)),
      std::make_shared<const Exprs>(std::move(strides)));
}

const SymbolicTensorImpl* symbolic_impl(const at::Tensor& t) {
  if (!t.defined()) return nullptr;
  // The class is final: an exact type check, cheaper than dynamic_cast.
  const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  if (typeid(*impl) != typeid(SymbolicTensorImpl)) return nullptr;
  return static_cast<const SymbolicTensorImpl*>(impl);
}

}  // namespace fx::capture
