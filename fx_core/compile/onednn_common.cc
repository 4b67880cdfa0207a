#include "fx_core/compile/onednn_common.h"

#include <ATen/ops/empty.h>

#include <string_view>
#include <vector>

#include "fx_core/compile/cache_flush.h"
#include "fx_core/compile/huge_pages.h"
#include "fx_core/compile/shared_weights.h"

namespace fx {

struct SharedWeights::Impl {
  struct Entry {
    at::Tensor weight;  // kept alive: its identity is the key
    dnnl::memory::desc want;
    PackedWeights packed;
  };
  std::vector<Entry> entries;
};

namespace {

thread_local SharedWeights* current_weights = nullptr;

}  // namespace

SharedWeights::SharedWeights() : impl_(std::make_unique<Impl>()) {}
SharedWeights::~SharedWeights() = default;
size_t SharedWeights::packs() const { return impl_->entries.size(); }

SharedWeightsScope::SharedWeightsScope(SharedWeights* weights)
    : previous_(current_weights) {
  current_weights = weights;
}
SharedWeightsScope::~SharedWeightsScope() { current_weights = previous_; }
SharedWeights* SharedWeightsScope::current() { return current_weights; }

dnnl::engine& onednn_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

bool append_onednn_activation(std::string_view a, double min_val,
                              double max_val, dnnl::post_ops* ops) {
  using dnnl::algorithm;
  auto eltwise = [&](algorithm alg, float alpha, float beta) {
    ops->append_eltwise(1.f, alg, alpha, beta);
  };
  if (a == "none") return true;
  if (a == "relu") {
    eltwise(algorithm::eltwise_relu, 0.f, 0.f);
  } else if (a == "gelu") {
    eltwise(algorithm::eltwise_gelu_erf, 0.f, 0.f);
  } else if (a == "gelu_tanh") {
    eltwise(algorithm::eltwise_gelu_tanh, 0.f, 0.f);
  } else if (a == "hardtanh") {
    eltwise(algorithm::eltwise_clip, static_cast<float>(min_val),
            static_cast<float>(max_val));
  } else if (a == "hardswish") {
    eltwise(algorithm::eltwise_hardswish, 0.f, 0.f);
  } else if (a == "silu") {
    eltwise(algorithm::eltwise_swish, 1.f, 0.f);
  } else if (a == "sigmoid") {
    eltwise(algorithm::eltwise_logistic, 0.f, 0.f);
  } else if (a == "hardsigmoid") {  // clamp(x / 6 + 1 / 2, 0, 1)
    eltwise(algorithm::eltwise_linear, 1.f / 6.f, 0.5f);
    eltwise(algorithm::eltwise_clip, 0.f, 1.f);
  } else {
    return false;
  }
  return true;
}

PackedWeights pack_weights(dnnl::memory user, const dnnl::memory::desc& want) {
  PackedWeights w;
  w.block = allocate_on_huge_pages(want.get_size());
  w.memory = dnnl::memory(want, onednn_engine(), w.block.get());
  dnnl::stream stream(onednn_engine());
  dnnl::reorder(user, w.memory).execute(stream, user, w.memory);
  stream.wait();
  return w;
}

bool skip_amx_kernels(dnnl::primitive_desc& pd) {
  while (std::string_view(pd.impl_info_str()).find("amx") !=
         std::string_view::npos) {
    if (!pd.next_impl()) return false;
  }
  return true;
}

void evict_from_caches(const PackedWeights& w) {
  flush_from_caches(w.memory.get_data_handle(), w.memory.get_desc().get_size());
}

PackedWeights pack_weights_of(const at::Tensor& weight, dnnl::memory user,
                              const dnnl::memory::desc& want) {
  SharedWeights* shared = SharedWeightsScope::current();
  if (shared == nullptr) return pack_weights(user, want);
  std::vector<SharedWeights::Impl::Entry>& entries = shared->impl().entries;
  for (const SharedWeights::Impl::Entry& e : entries) {
    if (e.weight.is_same(weight) && e.want == want) return e.packed;
  }
  entries.push_back({weight, want, pack_weights(user, want)});
  return entries.back().packed;
}

OnednnConvDims onednn_conv_dims(const ConvGeometry& g,
                                const std::vector<int64_t>& weight_sizes,
                                const std::vector<int64_t>& input_sizes) {
  const std::vector<int64_t>& w = weight_sizes;
  OnednnConvDims d;
  d.src.assign(input_sizes.begin(), input_sizes.end());
  const std::vector<int64_t> out = conv_output_sizes(g, w, input_sizes);
  d.dst.assign(out.begin(), out.end());
  d.weights.assign(w.begin(), w.end());
  if (g.groups > 1) {
    d.weights = {g.groups, w[0] / g.groups, w[1], w[2], w[3]};
    d.weights_tag = dnnl::memory::format_tag::goihw;
  }
  d.bias = {w[0]};
  d.strides = {g.stride[0], g.stride[1]};
  d.dilates = {g.dilation[0] - 1, g.dilation[1] - 1};
  d.pad = {g.padding[0], g.padding[1]};
  return d;
}

const void* NhwcInput::data(const at::Tensor& input, dnnl::stream& stream,
                            at::Tensor* keep) {
  constexpr auto kNhwc = at::MemoryFormat::ChannelsLast;
  if (input.is_contiguous(kNhwc)) return input.data_ptr();
  if (!input.is_contiguous() || input.sizes() != c10::IntArrayRef(sizes_)) {
    *keep = input.contiguous(kNhwc);
    return keep->data_ptr();
  }
  if (!buffer_.defined()) {
    using Tag = dnnl::memory::format_tag;
    const dnnl::memory::dims dims(sizes_.begin(), sizes_.end());
    // Raw storage only: a quantized input's bytes go in a uint8 buffer.
    const at::ScalarType kind =
        input.is_quantized() ? at::kByte : input.scalar_type();
    buffer_ = at::empty(sizes_, at::TensorOptions().dtype(kind), kNhwc);
    nchw_ = dnnl::memory({dims, type_, Tag::nchw}, onednn_engine(),
                         DNNL_MEMORY_NONE);
    nhwc_ = dnnl::memory({dims, type_, Tag::nhwc}, onednn_engine(),
                         buffer_.data_ptr());
    reorder_ = dnnl::reorder(nchw_, nhwc_);
  }
  nchw_.set_data_handle(input.data_ptr());
  reorder_.execute(stream, nchw_, nhwc_);
  return buffer_.data_ptr();
}

}  // namespace fx
