// fx::capture::SymbolicTensorImpl: the tensors of make_fx's symbolic mode
// (torch 1.13's FakeTensor with symbolic sizes, for C++ code): no data, a
// meta tensor at the hints (dtype, layout, aliasing) and symbolic sizes and
// strides whose SymInts are CaptureSymNodes.
//
// Contract:
//  - It reports device CPU and carries the Python dispatch keys, so every
//    operator call on it reaches the capture's torch_dispatch mode.
//  - sym_sizes() / sym_strides() / sym_numel() / sym_size(d) give the same
//    SymInt values (the same nodes) on every call; each size node makes
//    `torch.ops.aten.sym_size(t, d)` at first use, as make_fx's proxy slots.
//  - sizes() / strides() / numel() / size(d) (C++ asking for concrete
//    sizes) answer the hints and record a guard specialising each symbolic
//    value asked for (torch's guard_int); after the capture they throw.
//  - is_contiguous() decides the symbolic contiguity at the hints and
//    records the guards it takes (1.13's compute_contiguous on SymInts).
//  - A shallow copy (detach, `.data`) is a new tensor of the same meta and
//    expressions, with fresh nodes (make_fx gives every result its own).
#ifndef FX_CORE_CAPTURE_SYMBOLIC_TENSOR_H_
#define FX_CORE_CAPTURE_SYMBOLIC_TENSOR_H_

#include <ATen/core/Tensor.h>
#include <c10/core/TensorImpl.h>

#include <memory>
#include <vector>

#include "fx_core/capture/sym_int_node.h"
#include "fx_core/symbolic/sym_expr.h"

namespace fx::capture {

class SymbolicTensorImpl final : public c10::TensorImpl {
 public:
  // Expressions shared by the tensors that have them (the capture's memos
  // hand the same ones to every result of the same shapes).
  using Exprs = std::shared_ptr<const std::vector<sym::Expr>>;

  // Use make_symbolic_tensor.
  SymbolicTensorImpl(std::weak_ptr<SymNodeOwner> owner, at::Tensor meta,
                     Exprs sizes, Exprs strides);

  const at::Tensor& meta() const { return meta_; }
  const std::vector<sym::Expr>& size_exprs() const { return *size_exprs_; }
  const std::vector<sym::Expr>& stride_exprs() const { return *stride_exprs_; }
  const Exprs& shared_size_exprs() const { return size_exprs_; }
  const Exprs& shared_stride_exprs() const { return stride_exprs_; }
  // Whether a size is an expression of symbols (not an integer).
  bool has_symbolic_size() const { return has_symbolic_size_; }
  // The capture nodes of its sizes, strides and numel (those made so far),
  // for re-tracking.
  std::vector<CaptureSymNode*> nodes() const;

  c10::IntArrayRef sizes_custom() const override;
  c10::IntArrayRef strides_custom() const override;
  int64_t numel_custom() const override;
  int64_t storage_offset_custom() const override;
  int64_t dim_custom() const override;
  int64_t size_custom(int64_t d) const override;
  c10::SymInt sym_size_custom(int64_t d) const override;
  c10::SymIntArrayRef sym_sizes_custom() const override;
  c10::SymIntArrayRef sym_strides_custom() const override;
  c10::SymInt sym_numel_custom() const override;
  c10::SymInt sym_storage_offset_custom() const override;
  bool is_contiguous_custom(at::MemoryFormat format) const override;
  bool is_strides_like_custom(at::MemoryFormat format) const override;
  bool is_non_overlapping_and_dense_custom() const override;
  c10::intrusive_ptr<c10::TensorImpl> shallow_copy_and_detach(
      const c10::VariableVersion& version_counter,
      bool allow_tensor_metadata_change) const override;
  c10::intrusive_ptr<c10::TensorImpl> shallow_copy_and_detach(
      c10::VariableVersion&& version_counter,
      bool allow_tensor_metadata_change) const override;
  void shallow_copy_from(
      const c10::intrusive_ptr<c10::TensorImpl>& impl) override;

 private:
  const char* tensorimpl_type_name() const override {
    return "fx::capture::SymbolicTensorImpl";
  }
  SymNodeOwner& owner() const;
  sym::GuardRecorder& guards() const;
  void specialize(const std::vector<sym::Expr>& exprs) const;
  c10::SymInt make_int(const sym::Expr& e, int64_t hint,
                       CaptureSymNode::Source::Kind kind, int64_t dim) const;

  std::weak_ptr<SymNodeOwner> owner_;
  at::Tensor meta_;
  Exprs size_exprs_;
  Exprs stride_exprs_;
  bool has_symbolic_size_ = false;
  // The SymInts LibTorch sees, made on first request (most tensors of a
  // capture never have their symbolic sizes asked for, fewer their
  // strides).
  const std::vector<c10::SymInt>& sym_ints(bool strides) const;
  mutable std::vector<c10::SymInt> sizes_;
  mutable std::vector<c10::SymInt> strides_;
  mutable bool made_sizes_ = false;
  mutable bool made_strides_ = false;
  mutable c10::optional<c10::SymInt> numel_;
};

// A symbolic tensor standing for `meta` (a meta tensor at the hints) with
// these sizes and strides (one expression per dimension each).
at::Tensor make_symbolic_tensor(std::weak_ptr<SymNodeOwner> owner,
                                at::Tensor meta,
                                SymbolicTensorImpl::Exprs sizes,
                                SymbolicTensorImpl::Exprs strides);
at::Tensor make_symbolic_tensor(std::weak_ptr<SymNodeOwner> owner,
                                at::Tensor meta, std::vector<sym::Expr> sizes,
                                std::vector<sym::Expr> strides);

// The symbolic tensor behind `t`, or nullptr.
const SymbolicTensorImpl* symbolic_impl(const at::Tensor& t);

}  // namespace fx::capture

#endif  // FX_CORE_CAPTURE_SYMBOLIC_TENSOR_H_
