#include "fx_core/compile/onednn_conv.h"

#include <ATen/ATen.h>

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "fx_core/compile/onednn_common.h"

namespace fx {
namespace {

using dnnl::algorithm;
using dnnl::memory;
using Dt = dnnl::memory::data_type;
using Tag = dnnl::memory::format_tag;

bool supported(const at::Tensor& w, const at::Tensor& bias,
               const FusedConvParams& p, const std::vector<int64_t>& in) {
  if (w.scalar_type() != at::kFloat || w.dim() != 4 || !w.device().is_cpu() ||
      w.layout() != at::kStrided ||
      !conv_geometry_fits(p, w.sizes().vec(), in)) {
    return false;
  }
  return !bias.defined() || (bias.scalar_type() == at::kFloat &&
                             bias.dim() == 1 && bias.size(0) == w.size(0));
}

// The op descriptor: NHWC activations for kDirect, whatever oneDNN asks
// for (nChw16c) for kWinograd; weights in oneDNN's preferred layout.
dnnl::convolution_forward::desc make_op_desc(const OnednnConvDims& s,
                                             bool has_bias,
                                             ConvAlgorithm choice) {
  const bool wino = choice == ConvAlgorithm::kWinograd;
  const Tag act = wino ? Tag::any : Tag::nhwc;
  const memory::desc src_md(s.src, Dt::f32, act);
  const memory::desc dst_md(s.dst, Dt::f32, act);
  const memory::desc w_any(s.weights, Dt::f32, Tag::any);
  const algorithm alg =
      wino ? algorithm::convolution_winograd : algorithm::convolution_direct;
  const auto kind = dnnl::prop_kind::forward_inference;
  if (has_bias) {
    const memory::desc b_md(s.bias, Dt::f32, Tag::a);
    return {kind,   alg,       src_md,    w_any, b_md,
            dst_md, s.strides, s.dilates, s.pad, s.pad};
  }
  return {kind, alg, src_md, w_any, dst_md, s.strides, s.dilates, s.pad, s.pad};
}

}  // namespace

struct OnednnConv::Impl {
  std::vector<int64_t> in_sizes, out_sizes;
  ConvAlgorithm algorithm = ConvAlgorithm::kDirect;
  std::string implementation;
  at::Tensor bias;  // contiguous; kept alive for its memory
  dnnl::convolution_forward prim;
  memory src, dst, bias_mem;
  PackedWeights weights;
  std::unordered_map<int, memory> args;
  dnnl::stream stream{onednn_engine()};
  bool has_residual = false;
  // kWinograd: the NHWC tensors the plan passes, and the reorders between
  // them and the primitive's blocked src / dst (owned memory).
  memory user_src, user_dst;
  dnnl::reorder to_blocked, from_blocked;
  std::unique_ptr<NhwcInput> input;  // the source as the primitive reads it

  void set_weights(const at::Tensor& weight, const OnednnConvDims& s,
                   const memory::desc& want);
  void set_activations(const dnnl::convolution_forward::primitive_desc& pd,
                       const OnednnConvDims& s);
};

// The weights, reordered once into the primitive's layout.
void OnednnConv::Impl::set_weights(const at::Tensor& weight,
                                   const OnednnConvDims& s,
                                   const memory::desc& want) {
  at::Tensor w = weight.contiguous();
  memory user_w({s.weights, Dt::f32, s.weights_tag}, onednn_engine(),
                w.data_ptr());
  weights = pack_weights_of(weight, user_w, want);
}

// src / dst: the caller's NHWC memory (re-pointed each run), or for
// kWinograd blocked memory of our own with reorders from and to NHWC.
void OnednnConv::Impl::set_activations(
    const dnnl::convolution_forward::primitive_desc& pd,
    const OnednnConvDims& s) {
  dnnl::engine& engine = onednn_engine();
  const memory::desc src_nhwc(s.src, Dt::f32, Tag::nhwc);
  const memory::desc dst_nhwc(s.dst, Dt::f32, Tag::nhwc);
  if (algorithm == ConvAlgorithm::kDirect) {
    src = memory(src_nhwc, engine, DNNL_MEMORY_NONE);
    dst = memory(dst_nhwc, engine, DNNL_MEMORY_NONE);
    return;
  }
  src = memory(pd.src_desc(), engine);
  dst = memory(pd.dst_desc(), engine);
  user_src = memory(src_nhwc, engine, DNNL_MEMORY_NONE);
  user_dst = memory(dst_nhwc, engine, DNNL_MEMORY_NONE);
  to_blocked = dnnl::reorder(user_src, src);
  from_blocked = dnnl::reorder(dst, user_dst);
}

bool OnednnConv::winograd_applies(const at::Tensor& w,
                                  const FusedConvParams& p) {
  return w.dim() == 4 && w.size(2) == 3 && w.size(3) == 3 && p.groups == 1 &&
         p.stride == std::vector<int64_t>{1, 1} &&
         p.dilation == std::vector<int64_t>{1, 1} && !p.has_residual;
}

namespace {

// The op's descriptor and oneDNN's implementations of it, the first
// fetched. oneDNN's iterator (next_impl) reads the op descriptor through a
// pointer: it lives on the heap, as long as the primitive descriptor.
struct Described {
  std::unique_ptr<dnnl::convolution_forward::desc> op;
  dnnl::convolution_forward::primitive_desc pd;
};

// nullopt when oneDNN cannot compute the op as the reference does.
std::optional<Described> describe(const at::Tensor& weight,
                                  const at::Tensor& bias,
                                  const FusedConvParams& p,
                                  const std::vector<int64_t>& in,
                                  ConvAlgorithm algorithm) {
  if (!supported(weight, bias, p, in)) return std::nullopt;
  if (algorithm == ConvAlgorithm::kWinograd &&
      !OnednnConv::winograd_applies(weight, p)) {
    return std::nullopt;
  }
  const OnednnConvDims s = onednn_conv_dims(p, weight.sizes().vec(), in);
  dnnl::post_ops ops;
  // The residual is added before the activation, as the reference does.
  if (p.has_residual) ops.append_sum(1.f);
  if (!append_onednn_activation(p.activation, p.min_val, p.max_val, &ops)) {
    return std::nullopt;
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  try {
    Described d;
    d.op = std::make_unique<dnnl::convolution_forward::desc>(
        make_op_desc(s, bias.defined(), algorithm));
    d.pd = {*d.op, attr, onednn_engine()};
    return d;
  } catch (const dnnl::error&) {
    return std::nullopt;  // no kernel for it
  }
}

// "jit_1x1:avx512_core" -> "avx512_core".
std::string instruction_set(const std::string& implementation) {
  const size_t colon = implementation.rfind(':');
  return colon == std::string::npos ? "" : implementation.substr(colon + 1);
}

}  // namespace

std::vector<std::string> OnednnConv::implementations(
    const at::Tensor& weight, const at::Tensor& bias, const FusedConvParams& p,
    const std::vector<int64_t>& in, ConvAlgorithm algorithm) {
  std::optional<Described> d = describe(weight, bias, p, in, algorithm);
  if (!d) return {};
  std::vector<std::string> names = {d->pd.impl_info_str()};
  const std::string isa = instruction_set(names[0]);
  while (d->pd.next_impl()) {
    const std::string name = d->pd.impl_info_str();
    if (instruction_set(name) == isa && name.rfind("ref", 0) != 0) {
      names.push_back(name);
    }
  }
  return names;
}

std::unique_ptr<OnednnConv> OnednnConv::create(
    const at::Tensor& weight, const at::Tensor& bias, const FusedConvParams& p,
    std::vector<int64_t> in, ConvAlgorithm algorithm,
    const std::string& implementation) {
  std::optional<Described> found = describe(weight, bias, p, in, algorithm);
  if (!found) return nullptr;
  dnnl::convolution_forward::primitive_desc& pd = found->pd;
  while (!implementation.empty() && pd.impl_info_str() != implementation) {
    if (!pd.next_impl()) return nullptr;
  }
  const OnednnConvDims s = onednn_conv_dims(p, weight.sizes().vec(), in);
  auto impl = std::make_unique<Impl>();
  impl->algorithm = algorithm;
  impl->implementation = pd.impl_info_str();
  impl->set_weights(weight, s, pd.weights_desc());
  impl->prim = dnnl::convolution_forward(pd);
  impl->set_activations(pd, s);
  impl->args = {{DNNL_ARG_SRC, impl->src},
                {DNNL_ARG_WEIGHTS, impl->weights.memory},
                {DNNL_ARG_DST, impl->dst}};
  if (bias.defined()) {
    impl->bias = bias.contiguous();
    impl->bias_mem = memory({s.bias, Dt::f32, Tag::a}, onednn_engine(),
                            impl->bias.data_ptr());
    impl->args.emplace(DNNL_ARG_BIAS, impl->bias_mem);
  }
  impl->has_residual = p.has_residual;
  impl->input = std::make_unique<NhwcInput>(in, Dt::f32);
  impl->in_sizes = std::move(in);
  impl->out_sizes.assign(s.dst.begin(), s.dst.end());
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
ConvAlgorithm OnednnConv::algorithm() const { return impl_->algorithm; }
std::string OnednnConv::implementation() const { return impl_->implementation; }

void OnednnConv::evict_weights() const { evict_from_caches(impl_->weights); }

void OnednnConv::run(const at::Tensor& input, const at::Tensor* residual,
                     const at::Tensor& out) {
  Impl& m = *impl_;
  at::Tensor keep;
  void* x = const_cast<void*>(m.input->data(input, m.stream, &keep));
  // The sum post-op accumulates into the destination: the residual first.
  if (m.has_residual && (residual->data_ptr() != out.data_ptr() ||
                         residual->strides() != out.strides())) {
    out.copy_(*residual);
  }
  if (m.algorithm == ConvAlgorithm::kWinograd) {
    m.user_src.set_data_handle(x);
    m.user_dst.set_data_handle(out.data_ptr());
    m.to_blocked.execute(m.stream, m.user_src, m.src);
    m.prim.execute(m.stream, m.args);
    m.from_blocked.execute(m.stream, m.dst, m.user_dst);
  } else {
    m.src.set_data_handle(x);
    m.dst.set_data_handle(out.data_ptr());
    m.prim.execute(m.stream, m.args);
  }
  m.stream.wait();
}

}  // namespace fx
