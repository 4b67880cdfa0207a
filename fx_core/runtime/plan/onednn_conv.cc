#include "fx_core/runtime/plan/onednn_conv.h"

#include <ATen/ATen.h>

#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <utility>

namespace fx {
namespace {

using dnnl::algorithm;
using dnnl::memory;
using Dt = dnnl::memory::data_type;
using Tag = dnnl::memory::format_tag;

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// The activation as eltwise post-ops; false for an unknown name.
bool append_activation(const FusedConvParams& p, dnnl::post_ops* ops) {
  const std::string& a = p.activation;
  if (a == "none") return true;
  if (a == "relu") {
    ops->append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f);
  } else if (a == "hardtanh") {
    ops->append_eltwise(1.f, algorithm::eltwise_clip,
                        static_cast<float>(p.min_val),
                        static_cast<float>(p.max_val));
  } else if (a == "hardswish") {
    ops->append_eltwise(1.f, algorithm::eltwise_hardswish, 0.f, 0.f);
  } else if (a == "silu") {
    ops->append_eltwise(1.f, algorithm::eltwise_swish, 1.f, 0.f);
  } else if (a == "sigmoid") {
    ops->append_eltwise(1.f, algorithm::eltwise_logistic, 0.f, 0.f);
  } else if (a == "hardsigmoid") {  // clamp(x / 6 + 1 / 2, 0, 1)
    ops->append_eltwise(1.f, algorithm::eltwise_linear, 1.f / 6.f, 0.5f);
    ops->append_eltwise(1.f, algorithm::eltwise_clip, 0.f, 1.f);
  } else {
    return false;
  }
  return true;
}

memory::dims output_dims(const memory::dims& in, const at::Tensor& w,
                         const FusedConvParams& p) {
  memory::dims out{in[0], w.size(0), 0, 0};
  for (int i = 0; i < 2; ++i) {
    const int64_t k = w.size(2 + i);
    out[2 + i] = (in[2 + i] + 2 * p.padding[i] - p.dilation[i] * (k - 1) - 1) /
                     p.stride[i] +
                 1;
  }
  return out;
}

bool supported(const at::Tensor& w, const at::Tensor& bias,
               const FusedConvParams& p, const std::vector<int64_t>& in) {
  if (w.scalar_type() != at::kFloat || w.dim() != 4 || in.size() != 4 ||
      !w.device().is_cpu() || w.layout() != at::kStrided) {
    return false;
  }
  if (bias.defined() && (bias.scalar_type() != at::kFloat || bias.dim() != 1 ||
                         bias.size(0) != w.size(0))) {
    return false;
  }
  if (p.stride.size() != 2 || p.padding.size() != 2 || p.dilation.size() != 2 ||
      p.groups < 1) {
    return false;
  }
  for (int i = 0; i < 2; ++i) {
    if (p.stride[i] < 1 || p.padding[i] < 0 || p.dilation[i] < 1) return false;
  }
  if (w.size(0) % p.groups != 0 || in[1] != w.size(1) * p.groups) return false;
  for (int64_t s : in) {
    if (s < 1) return false;
  }
  return true;
}

}  // namespace

struct OnednnConv::Impl {
  std::vector<int64_t> in_sizes, out_sizes;
  at::Tensor bias;  // contiguous; kept alive for its memory
  dnnl::convolution_forward prim;
  memory src, dst, weights, bias_mem, residual;
  std::unordered_map<int, memory> args;
  dnnl::stream stream{cpu_engine()};
  bool has_residual = false;
};

std::unique_ptr<OnednnConv> OnednnConv::create(const at::Tensor& weight,
                                               const at::Tensor& bias,
                                               const FusedConvParams& p,
                                               std::vector<int64_t> in) {
  if (!supported(weight, bias, p, in)) return nullptr;
  dnnl::post_ops ops;
  auto impl = std::make_unique<Impl>();
  const memory::dims src_dims(in.begin(), in.end());
  const memory::dims dst_dims = output_dims(src_dims, weight, p);
  if (dst_dims[2] < 1 || dst_dims[3] < 1) return nullptr;
  const memory::desc src_md(src_dims, Dt::f32, Tag::nhwc);
  const memory::desc dst_md(dst_dims, Dt::f32, Tag::nhwc);
  // The residual is added before the activation, as the reference does.
  if (p.has_residual) ops.append_binary(algorithm::binary_add, dst_md);
  if (!append_activation(p, &ops)) return nullptr;
  const int64_t g = p.groups;
  memory::dims w_dims{weight.size(0), weight.size(1), weight.size(2),
                      weight.size(3)};
  if (g > 1)
    w_dims = {g, weight.size(0) / g, weight.size(1), weight.size(2),
              weight.size(3)};
  const memory::desc w_any(w_dims, Dt::f32, Tag::any);
  const memory::dims strides{p.stride[0], p.stride[1]};
  const memory::dims dilates{p.dilation[0] - 1, p.dilation[1] - 1};
  const memory::dims pad{p.padding[0], p.padding[1]};
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  dnnl::engine& engine = cpu_engine();
  dnnl::convolution_forward::primitive_desc pd;
  try {
    if (bias.defined()) {
      const memory::desc b_md({weight.size(0)}, Dt::f32, Tag::a);
      pd = {{dnnl::prop_kind::forward_inference, algorithm::convolution_direct,
             src_md, w_any, b_md, dst_md, strides, dilates, pad, pad},
            attr,
            engine};
    } else {
      pd = {{dnnl::prop_kind::forward_inference, algorithm::convolution_direct,
             src_md, w_any, dst_md, strides, dilates, pad, pad},
            attr,
            engine};
    }
  } catch (const dnnl::error&) {
    return nullptr;
  }
  // The weights, reordered once into the primitive's layout.
  at::Tensor w = weight.contiguous();
  memory user_w({w_dims, Dt::f32, g > 1 ? Tag::goihw : Tag::oihw}, engine,
                w.data_ptr());
  impl->weights = memory(pd.weights_desc(), engine);
  dnnl::reorder(user_w, impl->weights)
      .execute(impl->stream, user_w, impl->weights);
  impl->stream.wait();
  impl->prim = dnnl::convolution_forward(pd);
  impl->src = memory(src_md, engine, DNNL_MEMORY_NONE);
  impl->dst = memory(dst_md, engine, DNNL_MEMORY_NONE);
  impl->args = {{DNNL_ARG_SRC, impl->src},
                {DNNL_ARG_WEIGHTS, impl->weights},
                {DNNL_ARG_DST, impl->dst}};
  if (bias.defined()) {
    impl->bias = bias.contiguous();
    impl->bias_mem = memory({{weight.size(0)}, Dt::f32, Tag::a}, engine,
                            impl->bias.data_ptr());
    impl->args.emplace(DNNL_ARG_BIAS, impl->bias_mem);
  }
  if (p.has_residual) {
    impl->has_residual = true;
    impl->residual = memory(dst_md, engine, DNNL_MEMORY_NONE);
    impl->args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1,
                       impl->residual);
  }
  impl->in_sizes = std::move(in);
  impl->out_sizes.assign(dst_dims.begin(), dst_dims.end());
  return std::unique_ptr<OnednnConv>(new OnednnConv(std::move(impl)));
}

OnednnConv::OnednnConv(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OnednnConv::~OnednnConv() = default;

const std::vector<int64_t>& OnednnConv::input_sizes() const {
  return impl_->in_sizes;
}
const std::vector<int64_t>& OnednnConv::output_sizes() const {
  return impl_->out_sizes;
}

void OnednnConv::run(const at::Tensor& input, const at::Tensor* residual,
                     const at::Tensor& out) {
  constexpr auto kNhwc = at::MemoryFormat::ChannelsLast;
  at::Tensor x = input.contiguous(kNhwc);
  impl_->src.set_data_handle(x.data_ptr());
  impl_->dst.set_data_handle(out.data_ptr());
  at::Tensor r;
  if (impl_->has_residual) {
    r = residual->contiguous(kNhwc);
    impl_->residual.set_data_handle(r.data_ptr());
  }
  impl_->prim.execute(impl_->stream, impl_->args);
  impl_->stream.wait();
}

}  // namespace fx
