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
  PackedWeights panels;
  at::Tensor bias;  // padded to whole panels; undefined: none
  FusedLinearParams params;
  bool relu = false;  // in the kernel; another activation after it
};

std::unique_ptr<PanelLinear> PanelLinear::create(const at::Tensor& weight,
                                                 const at::Tensor& bias,
                                                 const FusedLinearParams& p,
                                                 std::vector<int64_t> in) {
  if (!available() || !fused_linear_supported(weight, bias, in) ||
      !known_linear_activation(p.activation)) {
    return nullptr;
  }
  FusedLinearShape shape(std::move(in), weight.size(0));
  auto impl = std::make_unique<Impl>();
  impl->panels = pack_panels(weight);
  if (bias.defined()) {
    impl->bias = at::zeros({panel_count(shape.n) * kPanelWidth}, at::kFloat);
    impl->bias.narrow(0, 0, shape.n).copy_(bias.detach());
  }
  impl->params = p;
  impl->relu = p.activation == "relu";
  return std::unique_ptr<PanelLinear>(
      new PanelLinear(std::move(impl), std::move(shape)));
}

bool PanelLinear::available() { return panel_gemm_supported(); }

PanelLinear::PanelLinear(std::unique_ptr<Impl> impl, FusedLinearShape shape)
    : FusedLinearKernel(std::move(shape)), impl_(std::move(impl)) {}
PanelLinear::~PanelLinear() = default;

void PanelLinear::run(const at::Tensor& input, const at::Tensor* residual,
                      const at::Tensor& out) {
  const Impl& d = *impl_;
  const FusedLinearShape& s = shape();
  const at::Tensor x = input.contiguous();
  at::Tensor r;
  if (d.params.has_residual) {
    r = residual->contiguous();
    // Summed in place over more than one block of k: panel_gemm keeps the
    // partial sums in the output, so the residual is read from a copy.
    if (s.k > kPanelBlockDepth &&
        at::get_overlap_status(r, out) != at::MemOverlapStatus::No) {
      r = r.clone();
    }
  }
  PanelGemm g;
  g.m = s.rows;
  g.n = s.n;
  g.k = s.k;
  g.a = x.data_ptr<float>();
  g.lda = s.k;
  g.panels = static_cast<const float*>(d.panels.memory.get_data_handle());
  g.bias = d.bias.defined() ? d.bias.data_ptr<float>() : nullptr;
  g.residual = r.defined() ? r.data_ptr<float>() : nullptr;
  g.ldr = s.n;
  g.c = out.data_ptr<float>();
  g.ldc = s.n;
  g.relu = d.relu;
  at::parallel_for(0, panel_count(s.n), 1, [&](int64_t first, int64_t last) {
    panel_gemm(g, first, last);
    if (!d.relu) {
      activate_columns(out, first * kPanelWidth,
                       std::min(s.n, last * kPanelWidth), d.params);
    }
  });
}

void PanelLinear::evict_weights() const { evict_from_caches(impl_->panels); }

}  // namespace fx
