#include "fx_core/compile/onednn_pooling.h"

#include <ATen/ATen.h>

#include <utility>

#include "fx_core/compile/onednn_common.h"

namespace fx {
namespace {

using dnnl::memory;
using Dt = dnnl::memory::data_type;
using Tag = dnnl::memory::format_tag;

// oneDNN's output size for the window: floor((in + pads - extent) / s) + 1.
int64_t onednn_output_size(int64_t in, const PoolingWindow& w, size_t d) {
  const int64_t extent = (w.kernel[d] - 1) * w.dilation[d] + 1;
  const int64_t span = in + w.pad_begin[d] + w.pad_end[d] - extent;
  return span < 0 ? 0 : span / w.stride[d] + 1;
}

bool window_fits(const PoolingWindow& w, const std::vector<int64_t>& in,
                 const std::vector<int64_t>& out_hw) {
  for (const auto* v :
       {&w.kernel, &w.stride, &w.dilation, &w.pad_begin, &w.pad_end}) {
    if (v->size() != 2) return false;
  }
  if (out_hw.size() != 2) return false;
  for (size_t d = 0; d < 2; ++d) {
    if (w.kernel[d] < 1 || w.stride[d] < 1 || w.dilation[d] < 1 ||
        w.pad_begin[d] < 0 || w.pad_end[d] < 0 || out_hw[d] < 1 ||
        onednn_output_size(in[2 + d], w, d) != out_hw[d]) {
      return false;
    }
  }
  return true;
}

dnnl::algorithm onednn_algorithm(PoolingWindow::Kind kind) {
  switch (kind) {
    case PoolingWindow::Kind::kMax:
      return dnnl::algorithm::pooling_max;
    case PoolingWindow::Kind::kAvgIncludePad:
      return dnnl::algorithm::pooling_avg_include_padding;
    case PoolingWindow::Kind::kAvgExcludePad:
      return dnnl::algorithm::pooling_avg_exclude_padding;
  }
  return dnnl::algorithm::pooling_avg_exclude_padding;  // not reached
}

Tag tag_of(at::MemoryFormat format) {
  return format == at::MemoryFormat::ChannelsLast ? Tag::nhwc : Tag::nchw;
}

}  // namespace

struct OnednnPooling::Impl {
  std::vector<int64_t> in_sizes, out_sizes;
  at::MemoryFormat in_format = at::MemoryFormat::Contiguous;
  at::MemoryFormat out_format = at::MemoryFormat::Contiguous;
  dnnl::pooling_v2_forward prim;
  memory src, dst;
  dnnl::stream stream{onednn_engine()};
};

std::unique_ptr<OnednnPooling> OnednnPooling::create(
    const PoolingWindow& window, const std::vector<int64_t>& input_sizes,
    const std::vector<int64_t>& input_strides,
    const std::vector<int64_t>& output_hw) {
  if (input_sizes.size() != 4 || input_strides.size() != 4) return nullptr;
  for (int64_t s : input_sizes) {
    if (s < 1) return nullptr;
  }
  if (!window_fits(window, input_sizes, output_hw)) return nullptr;
  auto impl = std::make_unique<Impl>();
  // The result's memory format is ATen's choice for this input; the input
  // is read as dense in that format, or else in NCHW.
  const at::Tensor like =
      at::empty_strided(input_sizes, input_strides, at::device(at::kMeta));
  impl->out_format = like.suggest_memory_format();
  if (like.is_contiguous(impl->out_format)) {
    impl->in_format = impl->out_format;
  } else if (like.is_contiguous()) {
    impl->in_format = at::MemoryFormat::Contiguous;
  } else {
    return nullptr;
  }
  impl->in_sizes = input_sizes;
  impl->out_sizes = {input_sizes[0], input_sizes[1], output_hw[0],
                     output_hw[1]};
  const memory::desc src_md(input_sizes, Dt::f32, tag_of(impl->in_format));
  const memory::desc dst_md(impl->out_sizes, Dt::f32, tag_of(impl->out_format));
  memory::dims dilation = window.dilation;
  for (int64_t& d : dilation) d -= 1;  // oneDNN counts from 0
  try {
    const dnnl::pooling_v2_forward::desc desc(
        dnnl::prop_kind::forward_inference, onednn_algorithm(window.kind),
        src_md, dst_md, window.stride, window.kernel, dilation,
        window.pad_begin, window.pad_end);
    impl->prim = dnnl::pooling_v2_forward({desc, onednn_engine()});
  } catch (const dnnl::error&) {
    return nullptr;
  }
  impl->src = memory(src_md, onednn_engine(), DNNL_MEMORY_NONE);
  impl->dst = memory(dst_md, onednn_engine(), DNNL_MEMORY_NONE);
  return std::unique_ptr<OnednnPooling>(new OnednnPooling(std::move(impl)));
}

OnednnPooling::OnednnPooling(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
OnednnPooling::~OnednnPooling() = default;

const std::vector<int64_t>& OnednnPooling::output_sizes() const {
  return impl_->out_sizes;
}

at::Tensor OnednnPooling::empty_output() const {
  return at::empty(
      impl_->out_sizes,
      at::TensorOptions().dtype(at::kFloat).memory_format(impl_->out_format));
}

bool OnednnPooling::fits(const at::Tensor& input) const {
  return input.defined() && input.scalar_type() == at::kFloat &&
         input.device().is_cpu() && input.layout() == at::kStrided &&
         input.sizes() == c10::IntArrayRef(impl_->in_sizes) &&
         input.is_contiguous(impl_->in_format);
}

void OnednnPooling::run(const at::Tensor& input, const at::Tensor& out) {
  Impl& m = *impl_;
  m.src.set_data_handle(input.data_ptr());
  m.dst.set_data_handle(out.data_ptr());
  m.prim.execute(m.stream, {{DNNL_ARG_SRC, m.src}, {DNNL_ARG_DST, m.dst}});
  m.stream.wait();
}

}  // namespace fx
