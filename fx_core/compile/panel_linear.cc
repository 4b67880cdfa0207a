#include "fx_core/compile/panel_linear.h"

#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>

#include <utility>

#include "fx_core/compile/onednn_common.h"
#include "fx_core/compile/panel_gemm.h"
#include "fx_core/compile/parallel_for.h"

namespace fx {
namespace {

using Dt = dnnl::memory::data_type;

// `weight` [n, k] packed into panel_gemm's panels: a [panels, k, width]
// array, read from the weight zero-padded to whole panels by oneDNN's
// reorder (the weight tensor keys the packed copy a SharedWeights holds).
PackedWeights pack_panels(const at::Tensor& weight) {
  const int64_t n = weight.size(0), k = weight.size(1);
  const int64_t panels = panel_count(n);
  const at::Tensor padded = at::constant_pad_nd(
      weight.detach().contiguous(), {0, 0, 0, panels * kPanelWidth - n});
  const dnnl::memory::dims dims = {panels, k, kPanelWidth};
  const dnnl::memory user({dims, Dt::f32, {kPanelWidth * k, 1, k}},
                          onednn_engine(), padded.data_ptr());
  return pack_weights_of(weight, user,
                         {dims, Dt::f32, dnnl::memory::format_tag::abc});
}

}  // namespace

struct PanelLinear::Impl {
  std::vector<int64_t> in_sizes, out_sizes;
  int64_t m = 1, n = 0, k = 0;
  PackedWeights panels;
  at::Tensor bias;  // padded to whole panels; undefined: none
  FusedLinearParams params;
};

std::unique_ptr<PanelLinear> PanelLinear::create(const at::Tensor& weight,
                                                 const at::Tensor& bias,
                                                 const FusedLinearParams& p,
                                                 std::vector<int64_t> in) {
  if (!available() || !fused_linear_supported(weight, bias, in) ||
      !known_linear_activation(p.activation)) {
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  impl->n = weight.size(0);
  impl->k = weight.size(1);
  for (size_t i = 0; i + 1 < in.size(); ++i) impl->m *= in[i];
  impl->panels = pack_panels(weight);
  if (bias.defined()) {
    impl->bias = at::zeros({panel_count(impl->n) * kPanelWidth}, at::kFloat);
    impl->bias.narrow(0, 0, impl->n).copy_(bias.detach());
  }
  impl->params = p;
  impl->out_sizes = in;
  impl->out_sizes.back() = impl->n;
  impl->in_sizes = std::move(in);
  return std::unique_ptr<PanelLinear>(new PanelLinear(std::move(impl)));
}

bool PanelLinear::available() { return panel_gemm_supported(); }

PanelLinear::PanelLinear(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PanelLinear::~PanelLinear() = default;

const std::vector<int64_t>& PanelLinear::input_sizes() const {
  return impl_->in_sizes;
}
const std::vector<int64_t>& PanelLinear::output_sizes() const {
  return impl_->out_sizes;
}

void PanelLinear::run(const at::Tensor& input, const at::Tensor* residual,
                      const at::Tensor& out) {
  const Impl& d = *impl_;
  const at::Tensor x = input.contiguous();
  at::Tensor r;
  if (d.params.has_residual) {
    r = residual->contiguous();
    // Summed in place over more than one block of k: panel_gemm keeps the
    // partial sums in the output, so the residual is read from a copy.
    if (d.k > kPanelBlockDepth &&
        at::get_overlap_status(r, out) != at::MemOverlapStatus::No) {
      r = r.clone();
    }
  }
  PanelGemm g;
  g.m = d.m;
  g.n = d.n;
  g.k = d.k;
  g.a = x.data_ptr<float>();
  g.lda = d.k;
  g.panels = static_cast<const float*>(d.panels.memory.get_data_handle());
  g.bias = d.bias.defined() ? d.bias.data_ptr<float>() : nullptr;
  g.residual = r.defined() ? r.data_ptr<float>() : nullptr;
  g.ldr = d.n;
  g.c = out.data_ptr<float>();
  g.ldc = d.n;
  g.relu = d.params.activation == "relu";
  const bool after = !g.relu && d.params.activation != "none";
  at::Tensor out2d = out.view({d.m, d.n});
  at::parallel_for(0, panel_count(d.n), 1, [&](int64_t first, int64_t last) {
    panel_gemm(g, first, last);
    if (after) {
      const int64_t col0 = first * kPanelWidth;
      const int64_t cols = std::min(d.n, last * kPanelWidth) - col0;
      at::Tensor part = out2d.narrow(1, col0, cols);
      activate_in_place(part, d.params);
    }
  });
}

void PanelLinear::evict_weights() const { evict_from_caches(impl_->panels); }

}  // namespace fx
