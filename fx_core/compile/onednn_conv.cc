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

// A float32 CPU tensor of `sizes`, or an undefined one when `optional`.
bool float_tensor_of(const at::Tensor& t, const std::vector<int64_t>& sizes,
                     bool optional) {
  if (!t.defined()) return optional;
  return t.scalar_type() == at::kFloat && t.device().is_cpu() &&
         t.layout() == at::kStrided && t.sizes().vec() == sizes;
}

// Whether `tail` may follow the convolution in one oneDNN primitive: a 1x1
// convolution (stride 1, no padding, groups, dilation or residual) and a
// depthwise 3x3 over its channels (stride 1 or 2) with a known activation.
bool depthwise_tail_fits(const at::Tensor& w, const FusedConvParams& p,
                         const DepthwiseTail& tail) {
  const std::vector<int64_t> ones = {1, 1}, zeros = {0, 0};
  if (w.dim() != 4 || w.size(2) != 1 || w.size(3) != 1 || p.groups != 1 ||
      p.stride != ones || p.padding != zeros || p.dilation != ones ||
      p.has_residual) {
    return false;
  }
  const int64_t c = w.size(0);
  return float_tensor_of(tail.weight, {c, 1, 3, 3}, false) &&
         float_tensor_of(tail.bias, {c}, true) &&
         (tail.stride == 1 || tail.stride == 2);
}

// The op descriptor: NHWC activations for kDirect, whatever oneDNN asks
// for (nChw16c) for kWinograd, nChw16c for a depthwise tail (`blocked`);
// weights in oneDNN's preferred layout.
dnnl::convolution_forward::desc make_op_desc(const OnednnConvDims& s,
                                             bool has_bias,
                                             ConvAlgorithm choice,
                                             bool blocked) {
  const bool wino = choice == ConvAlgorithm::kWinograd;
  const Tag act = wino ? Tag::any : blocked ? Tag::nChw16c : Tag::nhwc;
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
  // Whether the primitive's activations are blocked (kWinograd, a
  // depthwise tail); then the NHWC tensors the plan passes, and the
  // reorders between them and the primitive's src / dst (owned memory).
  bool blocked = false;
  memory user_src, user_dst;
  dnnl::reorder to_blocked, from_blocked;
  std::unique_ptr<NhwcInput> input;  // the source as the primitive reads it

  // A depthwise tail's weights (packed) and bias (zeros when it has none).
  PackedWeights dw_weights;
  at::Tensor dw_bias;
  memory dw_bias_mem;

  // The primitive of `pd` (its implementation chosen) on `weight` and
  // `bias`, writing NHWC of s.dst.
  static std::unique_ptr<Impl> make(
      const dnnl::convolution_forward::primitive_desc& pd,
      const OnednnConvDims& s, const at::Tensor& weight, const at::Tensor& bias,
      const FusedConvParams& p, std::vector<int64_t> in,
      ConvAlgorithm algorithm, bool blocked);
  void set_weights(const at::Tensor& weight, const OnednnConvDims& s,
                   const memory::desc& want);
  void set_activations(const dnnl::convolution_forward::primitive_desc& pd,
                       const OnednnConvDims& s);
  void set_depthwise(const DepthwiseTail& tail,
                     const dnnl::convolution_forward::primitive_desc& pd);
};

std::unique_ptr<OnednnConv::Impl> OnednnConv::Impl::make(
    const dnnl::convolution_forward::primitive_desc& pd,
    const OnednnConvDims& s, const at::Tensor& weight, const at::Tensor& bias,
    const FusedConvParams& p, std::vector<int64_t> in, ConvAlgorithm algorithm,
    bool blocked) {
  auto impl = std::make_unique<Impl>();
  impl->algorithm = algorithm;
  impl->blocked = blocked;
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
  return impl;
}

// The depthwise post-op's arguments: its weights packed as the primitive
// wants them (from (C, 1, 3, 3), i.e. goihw with one channel per group) and
// its bias.
void OnednnConv::Impl::set_depthwise(
    const DepthwiseTail& tail,
    const dnnl::convolution_forward::primitive_desc& pd) {
  constexpr int kDwWeights = DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS;
  constexpr int kDwBias = DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_BIAS;
  const int64_t c = tail.weight.size(0);
  at::Tensor w = tail.weight.contiguous();
  memory user_w({{c, 1, 1, 3, 3}, Dt::f32, Tag::goihw}, onednn_engine(),
                w.data_ptr());
  dw_weights = pack_weights_of(
      tail.weight, user_w, pd.query_md(dnnl::query::exec_arg_md, kDwWeights));
  dw_bias =
      tail.bias.defined() ? tail.bias.contiguous() : at::zeros({c}, at::kFloat);
  dw_bias_mem =
      memory({{c}, Dt::f32, Tag::a}, onednn_engine(), dw_bias.data_ptr());
  args.emplace(kDwWeights, dw_weights.memory);
  args.emplace(kDwBias, dw_bias_mem);
}

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
// blocked memory of our own with reorders from and to NHWC.
void OnednnConv::Impl::set_activations(
    const dnnl::convolution_forward::primitive_desc& pd,
    const OnednnConvDims& s) {
  dnnl::engine& engine = onednn_engine();
  const memory::desc src_nhwc(s.src, Dt::f32, Tag::nhwc);
  const memory::desc dst_nhwc(s.dst, Dt::f32, Tag::nhwc);
  if (!blocked) {
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
// With a `tail`: the depthwise convolution as oneDNN's depthwise post-op
// (padding 1), its activation after it.
std::optional<Described> describe(const at::Tensor& weight,
                                  const at::Tensor& bias,
                                  const FusedConvParams& p,
                                  const std::vector<int64_t>& in,
                                  ConvAlgorithm algorithm,
                                  const DepthwiseTail* tail = nullptr) {
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
  if (tail != nullptr) {
    ops.append_dw(Dt::f32, Dt::f32, Dt::f32, 3, tail->stride, 1, 0, {});
    if (!append_onednn_activation(tail->activation, tail->min_val,
                                  tail->max_val, &ops)) {
      return std::nullopt;
    }
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  try {
    Described d;
    d.op = std::make_unique<dnnl::convolution_forward::desc>(
        make_op_desc(s, bias.defined(), algorithm, tail != nullptr));
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
  return std::unique_ptr<OnednnConv>(new OnednnConv(
      Impl::make(pd, s, weight, bias, p, std::move(in), algorithm,
                 algorithm == ConvAlgorithm::kWinograd)));
}

std::unique_ptr<OnednnConv> OnednnConv::create_with_depthwise(
    const at::Tensor& weight, const at::Tensor& bias, const FusedConvParams& p,
    std::vector<int64_t> in, const DepthwiseTail& tail) {
  if (!depthwise_tail_fits(weight, p, tail)) return nullptr;
  std::optional<Described> found =
      describe(weight, bias, p, in, ConvAlgorithm::kDirect, &tail);
  if (!found) return nullptr;
  dnnl::convolution_forward::primitive_desc& pd = found->pd;
  if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0) return nullptr;
  OnednnConvDims s = onednn_conv_dims(p, weight.sizes().vec(), in);
  // The depthwise result's sizes, as torch.conv2d computes them.
  const int64_t stride = tail.stride;
  s.dst[2] = (s.dst[2] - 1) / stride + 1;
  s.dst[3] = (s.dst[3] - 1) / stride + 1;
  if (pd.dst_desc() != memory::desc(s.dst, Dt::f32, Tag::nChw16c)) {
    return nullptr;
  }
  std::unique_ptr<Impl> impl =
      Impl::make(pd, s, weight, bias, p, std::move(in), ConvAlgorithm::kDirect,
                 /*blocked=*/true);
  impl->set_depthwise(tail, pd);
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

void OnednnConv::evict_weights() const {
  evict_from_caches(impl_->weights);
  if (impl_->dw_weights.block) evict_from_caches(impl_->dw_weights);
}

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
  if (m.blocked) {
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
