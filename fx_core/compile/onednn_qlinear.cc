#include "fx_core/compile/onednn_qlinear.h"

#include <ATen/ATen.h>

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
               const at::Tensor& bias, const QuantizedLinearParams& p,
               const std::vector<int64_t>& in) {
  if (w_scales.empty() || in.size() != 2 || in[0] < 1 || in[1] < 1 ||
      in[1] != w.size(1) || w.size(0) < 1) {
    return false;
  }
  if (bias.defined() && (bias.scalar_type() != at::kFloat || bias.dim() != 1 ||
                         bias.size(0) != w.size(0))) {
    return false;
  }
  return usable_u8_qparams(p.input_scale, p.input_zero_point) &&
         usable_u8_qparams(p.output_scale, p.output_zero_point);
}

// LibTorch's attributes: output scales per output feature (mask on N) or
// one, the zero points when not 0, ReLU as a post-op.
dnnl::primitive_attr make_attr(const QuantizedLinearParams& p,
                               const Int8Scales& r) {
  dnnl::primitive_attr attr;
  const int per_feature = r.output_scales.size() > 1 ? 1 << 1 : 0;
  attr.set_output_scales(per_feature, r.output_scales);
  if (p.input_zero_point != 0) {
    attr.set_zero_points(DNNL_ARG_SRC, 0,
                         {static_cast<int32_t>(p.input_zero_point)});
  }
  if (p.output_zero_point != 0) {
    attr.set_zero_points(DNNL_ARG_DST, 0,
                         {static_cast<int32_t>(p.output_zero_point)});
  }
  if (p.relu) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(ops);
  }
  return attr;
}

bool is_u8(const at::Tensor& t) {
  return t.scalar_type() == at::kQUInt8 || t.scalar_type() == at::kByte;
}

}  // namespace

struct OnednnQLinear::Impl {
  Impl(at::Tensor w, at::Tensor b, std::vector<double> scales,
       const QuantizedLinearParams& p, std::vector<int64_t> in)
      : weight(std::move(w)),
        bias(std::move(b)),
        weight_scales(std::move(scales)),
        params(p),
        in_sizes(std::move(in)),
        out_sizes{in_sizes[0], weight.size(0)} {}

  at::Tensor weight, bias;  // as given (quantized; float)
  std::vector<double> weight_scales;
  QuantizedLinearParams params;
  std::vector<int64_t> in_sizes, out_sizes;
  std::string implementation;
  at::Tensor scaled_bias;  // in accumulator units; kept for its memory
  dnnl::matmul prim;
  memory src, dst, bias_mem;
  PackedWeights weights;
  std::unordered_map<int, memory> args;
  dnnl::stream stream{onednn_engine()};

  // The primitive for `params` (set), with the weights taken from `packed`
  // when it holds them in the layout the primitive wants; false when oneDNN
  // has no kernel for it.
  bool build(const PackedWeights* packed);
};

bool OnednnQLinear::Impl::build(const PackedWeights* packed) {
  const int64_t m = in_sizes[0], k = in_sizes[1], n = out_sizes[1];
  const Int8Scales r =
      int8_scales(params.input_scale, params.output_scale, weight_scales);
  const memory::desc src_md({m, k}, Dt::u8, Tag::ab);
  const memory::desc w_any({k, n}, Dt::s8, Tag::any);
  const memory::desc bias_md({1, n}, Dt::f32, Tag::ab);
  const memory::desc dst_md({m, n}, Dt::u8, Tag::ab);
  dnnl::matmul::primitive_desc pd;
  try {
    const dnnl::matmul::desc desc =
        bias.defined() ? dnnl::matmul::desc(src_md, w_any, bias_md, dst_md)
                       : dnnl::matmul::desc(src_md, w_any, dst_md);
    pd = dnnl::matmul::primitive_desc(desc, make_attr(params, r),
                                      onednn_engine());
  } catch (const dnnl::error&) {
    return false;
  }
  implementation = pd.impl_info_str();
  if (packed != nullptr && packed->memory.get_desc() == pd.weights_desc()) {
    weights = *packed;
  } else {
    // PyTorch's (N, K) row-major is oneDNN's (K, N) in `ba`.
    const at::Tensor w = weight.int_repr().contiguous();
    memory user_w({{k, n}, Dt::s8, Tag::ba}, onednn_engine(), w.data_ptr());
    weights = pack_weights_of(weight, user_w, pd.weights_desc());
  }
  prim = dnnl::matmul(pd);
  dnnl::engine& engine = onednn_engine();
  src = memory(src_md, engine, DNNL_MEMORY_NONE);
  dst = memory(dst_md, engine, DNNL_MEMORY_NONE);
  args = {{DNNL_ARG_SRC, src},
          {DNNL_ARG_WEIGHTS, weights.memory},
          {DNNL_ARG_DST, dst}};
  if (bias.defined()) {
    scaled_bias = bias_in_accumulator_units(bias, r.bias_scales);
    bias_mem = memory(bias_md, engine, scaled_bias.data_ptr());
    args.emplace(DNNL_ARG_BIAS, bias_mem);
  }
  return true;
}

std::unique_ptr<OnednnQLinear> OnednnQLinear::create(
    const at::Tensor& weight, const at::Tensor& bias,
    const QuantizedLinearParams& p, std::vector<int64_t> in) {
  std::vector<double> w_scales = int8_weight_scales(weight, 2);
  if (!supported(weight, w_scales, bias, p, in)) return nullptr;
  auto impl = std::make_unique<Impl>(weight, bias, std::move(w_scales), p,
                                     std::move(in));
  if (!impl->build(nullptr)) return nullptr;
  return std::unique_ptr<OnednnQLinear>(new OnednnQLinear(std::move(impl)));
}

std::unique_ptr<OnednnQLinear> OnednnQLinear::with_params(
    const QuantizedLinearParams& p) const {
  const Impl& me = *impl_;
  if (!supported(me.weight, me.weight_scales, me.bias, p, me.in_sizes)) {
    return nullptr;
  }
  auto impl = std::make_unique<Impl>(me.weight, me.bias, me.weight_scales, p,
                                     me.in_sizes);
  if (!impl->build(&me.weights)) return nullptr;
  return std::unique_ptr<OnednnQLinear>(new OnednnQLinear(std::move(impl)));
}

OnednnQLinear::OnednnQLinear(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
OnednnQLinear::~OnednnQLinear() = default;

const std::vector<int64_t>& OnednnQLinear::input_sizes() const {
  return impl_->in_sizes;
}
const std::vector<int64_t>& OnednnQLinear::output_sizes() const {
  return impl_->out_sizes;
}
const QuantizedLinearParams& OnednnQLinear::params() const {
  return impl_->params;
}
std::string OnednnQLinear::implementation() const {
  return impl_->implementation;
}

void OnednnQLinear::run(const at::Tensor& input, const at::Tensor& out) {
  TORCH_CHECK(is_u8(input) && is_u8(out),
              "OnednnQLinear: input and output must be quint8 or uint8");
  TORCH_CHECK(input.sizes() == impl_->in_sizes &&
                  out.sizes() == impl_->out_sizes && input.is_contiguous() &&
                  out.is_contiguous(),
              "OnednnQLinear: tensors of other sizes than planned, or not "
              "row-major");
  Impl& m = *impl_;
  m.src.set_data_handle(input.data_ptr());
  m.dst.set_data_handle(out.data_ptr());
  m.prim.execute(m.stream, m.args);
  m.stream.wait();
}

}  // namespace fx
