#include "fx_core/compile/onednn_linear.h"

#include <ATen/ATen.h>

#include <unordered_map>
#include <utility>

#include "fx_core/compile/onednn_common.h"

namespace fx {
namespace {

using dnnl::algorithm;
using dnnl::memory;
using Dt = dnnl::memory::data_type;
using Tag = dnnl::memory::format_tag;

}  // namespace

struct OnednnLinear::Impl {
  at::Tensor bias;  // contiguous; kept alive for its memory
  dnnl::matmul prim;
  memory src, dst, bias_mem, residual;
  PackedWeights weights;
  std::unordered_map<int, memory> args;
  dnnl::stream stream{onednn_engine()};
  bool has_residual = false;
};

std::unique_ptr<OnednnLinear> OnednnLinear::create(const at::Tensor& weight,
                                                   const at::Tensor& bias,
                                                   const FusedLinearParams& p,
                                                   std::vector<int64_t> in) {
  if (!fused_linear_supported(weight, bias, in)) return nullptr;
  FusedLinearShape shape(std::move(in), weight.size(0));
  const int64_t m = shape.rows, k = shape.k, n = shape.n;
  const memory::desc src_md({m, k}, Dt::f32, Tag::ab);
  const memory::desc dst_md({m, n}, Dt::f32, Tag::ab);
  const memory::desc w_any({k, n}, Dt::f32, Tag::any);
  const memory::desc b_md({1, n}, Dt::f32, Tag::ab);
  dnnl::post_ops ops;
  // The residual is added before the activation, as the reference does.
  if (p.has_residual) ops.append_binary(algorithm::binary_add, dst_md);
  if (!append_onednn_activation(p.activation, p.min_val, p.max_val, &ops))
    return nullptr;
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  dnnl::engine& engine = onednn_engine();
  dnnl::matmul::primitive_desc pd;
  try {
    pd =
        bias.defined()
            ? dnnl::matmul::primitive_desc(
                  dnnl::matmul::desc(src_md, w_any, b_md, dst_md), attr, engine)
            : dnnl::matmul::primitive_desc(
                  dnnl::matmul::desc(src_md, w_any, dst_md), attr, engine);
  } catch (const dnnl::error&) {
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  // The weights, reordered once: torch's [N, K] rows are oneDNN's [K, N]
  // in column-major order (ba).
  at::Tensor w = weight.contiguous();
  memory user_w({{k, n}, Dt::f32, Tag::ba}, engine, w.data_ptr());
  impl->weights = pack_weights_of(weight, user_w, pd.weights_desc());
  impl->prim = dnnl::matmul(pd);
  impl->src = memory(src_md, engine, DNNL_MEMORY_NONE);
  impl->dst = memory(dst_md, engine, DNNL_MEMORY_NONE);
  impl->args = {{DNNL_ARG_SRC, impl->src},
                {DNNL_ARG_WEIGHTS, impl->weights.memory},
                {DNNL_ARG_DST, impl->dst}};
  if (bias.defined()) {
    impl->bias = bias.contiguous();
    impl->bias_mem = memory(b_md, engine, impl->bias.data_ptr());
    impl->args.emplace(DNNL_ARG_BIAS, impl->bias_mem);
  }
  if (p.has_residual) {
    impl->has_residual = true;
    impl->residual = memory(dst_md, engine, DNNL_MEMORY_NONE);
    impl->args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1,
                       impl->residual);
  }
  return std::unique_ptr<OnednnLinear>(
      new OnednnLinear(std::move(impl), std::move(shape)));
}

OnednnLinear::OnednnLinear(std::unique_ptr<Impl> impl, FusedLinearShape shape)
    : FusedLinearKernel(std::move(shape)), impl_(std::move(impl)) {}
OnednnLinear::~OnednnLinear() = default;

void OnednnLinear::run(const at::Tensor& input, const at::Tensor* residual,
                       const at::Tensor& out) {
  at::Tensor x = input.contiguous();
  impl_->src.set_data_handle(x.data_ptr());
  impl_->dst.set_data_handle(out.data_ptr());
  at::Tensor r;
  if (impl_->has_residual) {
    r = residual->contiguous();
    impl_->residual.set_data_handle(r.data_ptr());
  }
  impl_->prim.execute(impl_->stream, impl_->args);
  impl_->stream.wait();
}

void OnednnLinear::evict_weights() const { evict_from_caches(impl_->weights); }

}  // namespace fx
