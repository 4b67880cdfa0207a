#include "fx_core/compile/onednn_qconv.h"

#include <ATen/ATen.h>

#include <cmath>
#include <unordered_map>
#include <utility>

#include "fx_core/compile/int8_requantization.h"
#include "fx_core/compile/onednn_common.h"

namespace fx {
namespace {

using dnnl::memory;
using Dt = dnnl::memory::data_type;
using Tag = dnnl::memory::format_tag;

bool supported(const at::Tensor& w, const std::vector<double>& w_scales,
               const at::Tensor& bias, const QuantizedConvParams& p,
               const std::vector<int64_t>& in) {
  if (w_scales.empty() || in.size() != 4) return false;
  if (bias.defined() && (bias.scalar_type() != at::kFloat || bias.dim() != 1 ||
                         bias.size(0) != w.size(0))) {
    return false;
  }
  if (!usable_u8_qparams(p.input_scale, p.input_zero_point) ||
      !usable_u8_qparams(p.output_scale, p.output_zero_point)) {
    return false;
  }
  return !(p.relu && p.clamp) && conv_geometry_fits(p, w.sizes().vec(), in);
}

dnnl::primitive_attr make_attr(const QuantizedConvParams& p,
                               const Int8Scales& r) {
  dnnl::primitive_attr attr;
  const int per_channel = r.output_scales.size() > 1 ? 1 << 1 : 0;
  attr.set_output_scales(per_channel, r.output_scales);
  if (p.input_zero_point != 0) {
    attr.set_zero_points(DNNL_ARG_SRC, 0,
                         {static_cast<int32_t>(p.input_zero_point)});
  }
  if (p.output_zero_point != 0) {
    attr.set_zero_points(DNNL_ARG_DST, 0,
                         {static_cast<int32_t>(p.output_zero_point)});
  }
  dnnl::post_ops ops;
  if (p.relu) {
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  } else if (p.clamp) {
    // Post-ops see the result in units of the output scale.
    const float lo = static_cast<float>(p.clamp->first / p.output_scale);
    const float hi = static_cast<float>(p.clamp->second / p.output_scale);
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_clip, lo, hi);
  }
  attr.set_post_ops(ops);
  return attr;
}

// Throws dnnl::error when oneDNN has no kernel for it.
dnnl::convolution_forward::primitive_desc make_pd(
    const OnednnConvDims& s, bool has_bias, const dnnl::primitive_attr& attr) {
  const memory::desc src_md(s.src, Dt::u8, Tag::nhwc);
  const memory::desc dst_md(s.dst, Dt::u8, Tag::nhwc);
  const memory::desc w_any(s.weights, Dt::s8, Tag::any);
  const auto kind = dnnl::prop_kind::forward_inference;
  const auto alg = dnnl::algorithm::convolution_direct;
  if (has_bias) {
    const memory::desc b_md(s.bias, Dt::f32, Tag::a);
    return {{kind, alg, src_md, w_any, b_md, dst_md, s.strides, s.dilates,
             s.pad, s.pad},
            attr,
            onednn_engine()};
  }
  return {
      {kind, alg, src_md, w_any, dst_md, s.strides, s.dilates, s.pad, s.pad},
      attr,
      onednn_engine()};
}

bool has_zero_points(const QuantizedConvParams& p) {
  return p.input_zero_point != 0 || p.output_zero_point != 0;
}

bool is_u8(const at::Tensor& t) {
  return t.scalar_type() == at::kQUInt8 || t.scalar_type() == at::kByte;
}

}  // namespace

struct OnednnQConv::Impl {
  Impl(at::Tensor w, at::Tensor b, std::vector<double> scales,
       const QuantizedConvParams& p, std::vector<int64_t> in)
      : weight(std::move(w)),
        bias(std::move(b)),
        weight_scales(std::move(scales)),
        params(p),
        in_sizes(std::move(in)) {}

  at::Tensor weight, bias;  // as given (quantized; float)
  std::vector<double> weight_scales;
  QuantizedConvParams params;
  std::vector<int64_t> in_sizes, out_sizes;
  std::string implementation;
  at::Tensor scaled_bias;  // in accumulator units; kept for its memory
  dnnl::convolution_forward prim;
  memory src, dst, bias_mem;
  PackedWeights weights;
  std::unordered_map<int, memory> args;
  dnnl::stream stream{onednn_engine()};
  // The source as the primitive reads it (NHWC; a quantize_per_tensor of
  // the model's input arrives NCHW).
  NhwcInput input{in_sizes, Dt::u8};

  // The primitive for `params` and `in_sizes` (set), with the weights
  // taken from `packed` when it holds them in the layout the primitive
  // wants; false when oneDNN has no kernel for it.
  bool build(const PackedWeights* packed);
};

bool OnednnQConv::Impl::build(const PackedWeights* packed) {
  const OnednnConvDims s =
      onednn_conv_dims(params, weight.sizes().vec(), in_sizes);
  const Int8Scales r =
      int8_scales(params.input_scale, params.output_scale, weight_scales);
  dnnl::convolution_forward::primitive_desc pd;
  try {
    pd = make_pd(s, bias.defined(), make_attr(params, r));
  } catch (const dnnl::error&) {
    return false;
  }
  if (has_zero_points(params) && !skip_amx_kernels(pd)) return false;
  implementation = pd.impl_info_str();
  if (packed != nullptr && packed->memory.get_desc() == pd.weights_desc()) {
    weights = *packed;
  } else {
    const at::Tensor w = weight.int_repr().contiguous();
    memory user_w({s.weights, Dt::s8, s.weights_tag}, onednn_engine(),
                  w.data_ptr());
    weights = pack_weights_of(weight, user_w, pd.weights_desc());
  }
  prim = dnnl::convolution_forward(pd);
  dnnl::engine& engine = onednn_engine();
  src = memory({s.src, Dt::u8, Tag::nhwc}, engine, DNNL_MEMORY_NONE);
  dst = memory({s.dst, Dt::u8, Tag::nhwc}, engine, DNNL_MEMORY_NONE);
  args = {{DNNL_ARG_SRC, src},
          {DNNL_ARG_WEIGHTS, weights.memory},
          {DNNL_ARG_DST, dst}};
  if (bias.defined()) {
    scaled_bias = bias_in_accumulator_units(bias, r.bias_scales);
    bias_mem =
        memory({s.bias, Dt::f32, Tag::a}, engine, scaled_bias.data_ptr());
    args.emplace(DNNL_ARG_BIAS, bias_mem);
  }
  out_sizes.assign(s.dst.begin(), s.dst.end());
  return true;
}

std::unique_ptr<OnednnQConv> OnednnQConv::create(const at::Tensor& weight,
                                                 const at::Tensor& bias,
                                                 const QuantizedConvParams& p,
                                                 std::vector<int64_t> in) {
  std::vector<double> w_scales = int8_weight_scales(weight, 4);
  if (!supported(weight, w_scales, bias, p, in)) return nullptr;
  auto impl = std::make_unique<Impl>(weight, bias, std::move(w_scales), p,
                                     std::move(in));
  if (!impl->build(nullptr)) return nullptr;
  return std::unique_ptr<OnednnQConv>(new OnednnQConv(std::move(impl)));
}

std::unique_ptr<OnednnQConv> OnednnQConv::with_params(
    const QuantizedConvParams& p) const {
  const Impl& me = *impl_;
  if (!supported(me.weight, me.weight_scales, me.bias, p, me.in_sizes)) {
    return nullptr;
  }
  auto impl = std::make_unique<Impl>(me.weight, me.bias, me.weight_scales, p,
                                     me.in_sizes);
  if (!impl->build(&me.weights)) return nullptr;
  return std::unique_ptr<OnednnQConv>(new OnednnQConv(std::move(impl)));
}

OnednnQConv::OnednnQConv(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OnednnQConv::~OnednnQConv() = default;

const std::vector<int64_t>& OnednnQConv::input_sizes() const {
  return impl_->in_sizes;
}
const std::vector<int64_t>& OnednnQConv::output_sizes() const {
  return impl_->out_sizes;
}
const QuantizedConvParams& OnednnQConv::params() const { return impl_->params; }
std::string OnednnQConv::implementation() const {
  return impl_->implementation;
}

void OnednnQConv::run(const at::Tensor& input, const at::Tensor& out) {
  TORCH_CHECK(is_u8(input) && is_u8(out),
              "OnednnQConv: input and output must be quint8 or uint8");
  TORCH_CHECK(input.sizes() == impl_->in_sizes &&
                  out.sizes() == impl_->out_sizes &&
                  out.is_contiguous(at::MemoryFormat::ChannelsLast),
              "OnednnQConv: tensors of other sizes than planned");
  Impl& m = *impl_;
  at::Tensor keep;
  m.src.set_data_handle(
      const_cast<void*>(m.input.data(input, m.stream, &keep)));
  m.dst.set_data_handle(out.data_ptr());
  m.prim.execute(m.stream, m.args);
  m.stream.wait();
}

}  // namespace fx
