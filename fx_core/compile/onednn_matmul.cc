#include "fx_core/compile/onednn_matmul.h"

#include <ATen/ATen.h>

#include <utility>

#include "fx_core/compile/onednn_common.h"

namespace fx {
namespace {

using dnnl::memory;
using Dt = dnnl::memory::data_type;

bool valid(const StridedLayout& l) {
  if (l.sizes.size() < 2 || l.sizes.size() > 6 ||
      l.strides.size() != l.sizes.size()) {
    return false;
  }
  for (size_t i = 0; i < l.sizes.size(); ++i) {
    if (l.sizes[i] < 1 || l.strides[i] < 1) return false;
  }
  return true;
}

bool same_layout(const at::Tensor& t, const StridedLayout& l) {
  return t.defined() && t.scalar_type() == at::kFloat && t.device().is_cpu() &&
         t.layout() == at::kStrided && !t.is_conj() && !t.is_neg() &&
         t.sizes() == c10::IntArrayRef(l.sizes) &&
         t.strides() == c10::IntArrayRef(l.strides);
}

memory::desc strided_desc(const StridedLayout& l) {
  return memory::desc(memory::dims(l.sizes.begin(), l.sizes.end()), Dt::f32,
                      memory::dims(l.strides.begin(), l.strides.end()));
}

}  // namespace

struct OnednnMatmul::Impl {
  StridedLayout a, b;
  std::vector<int64_t> out_sizes;
  dnnl::matmul prim;
  memory src, weights, dst;
  dnnl::stream stream{onednn_engine()};
};

std::unique_ptr<OnednnMatmul> OnednnMatmul::create(
    const StridedLayout& a, const StridedLayout& b, double scale,
    std::vector<int64_t> out_strides) {
  if (!valid(a) || !valid(b) || a.sizes.size() != b.sizes.size()) {
    return nullptr;
  }
  const size_t rank = a.sizes.size();
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (a.sizes[i] != b.sizes[i]) return nullptr;
  }
  if (a.sizes[rank - 1] != b.sizes[rank - 2]) return nullptr;
  auto impl = std::make_unique<Impl>();
  impl->a = a;
  impl->b = b;
  impl->out_sizes = a.sizes;
  impl->out_sizes[rank - 1] = b.sizes[rank - 1];
  StridedLayout out{impl->out_sizes, std::move(out_strides)};
  if (out.strides.empty()) {
    out.strides.resize(rank);
    int64_t stride = 1;
    for (size_t i = rank; i-- > 0;) {
      out.strides[i] = stride;
      stride *= out.sizes[i];
    }
  }
  if (!valid(out)) return nullptr;
  dnnl::primitive_attr attr;
  if (scale != 1.0) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_linear,
                       static_cast<float>(scale), 0.f);
    attr.set_post_ops(ops);
  }
  dnnl::engine& engine = onednn_engine();
  const memory::desc a_md = strided_desc(a), b_md = strided_desc(b),
                     out_md = strided_desc(out);
  try {
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, out_md),
                                    attr, engine);
    impl->prim = dnnl::matmul(pd);
  } catch (const dnnl::error&) {
    return nullptr;
  }
  impl->src = memory(a_md, engine, DNNL_MEMORY_NONE);
  impl->weights = memory(b_md, engine, DNNL_MEMORY_NONE);
  impl->dst = memory(out_md, engine, DNNL_MEMORY_NONE);
  return std::unique_ptr<OnednnMatmul>(new OnednnMatmul(std::move(impl)));
}

OnednnMatmul::OnednnMatmul(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
OnednnMatmul::~OnednnMatmul() = default;

const std::vector<int64_t>& OnednnMatmul::output_sizes() const {
  return impl_->out_sizes;
}

bool OnednnMatmul::fits(const at::Tensor& a, const at::Tensor& b) const {
  return same_layout(a, impl_->a) && same_layout(b, impl_->b);
}

void OnednnMatmul::run(const at::Tensor& a, const at::Tensor& b,
                       const at::Tensor& out) {
  impl_->src.set_data_handle(a.data_ptr());
  impl_->weights.set_data_handle(b.data_ptr());
  impl_->dst.set_data_handle(out.data_ptr());
  impl_->prim.execute(impl_->stream, {{DNNL_ARG_SRC, impl_->src},
                                      {DNNL_ARG_WEIGHTS, impl_->weights},
                                      {DNNL_ARG_DST, impl_->dst}});
  impl_->stream.wait();
}

}  // namespace fx
