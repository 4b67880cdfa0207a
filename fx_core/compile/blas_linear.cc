#include "fx_core/compile/blas_linear.h"

#include <ATen/ATen.h>
#include <dlfcn.h>

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "fx_core/compile/cache_flush.h"
#include "fx_core/compile/parallel_for.h"
#include "fx_core/runtime/parallel.h"

namespace fx {
namespace {

// CBLAS's enumerators (cblas.h), which the BLAS's cblas_sgemm takes.
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
// A part has at least this many output columns (one AVX2 register pair).
constexpr int64_t kMinColumns = 16;

using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int,
                       const float*, int, float, float*, int);

// OpenBLAS's cblas_sgemm in this process, or nullptr when the BLAS is not
// OpenBLAS (its thread count cannot be held at one).
Sgemm openblas_sgemm() {
  static const Sgemm sgemm =
      OneBlasThread::possible()
          ? reinterpret_cast<Sgemm>(dlsym(RTLD_DEFAULT, "cblas_sgemm"))
          : nullptr;
  return sgemm;
}

bool fits_int(int64_t v) { return v <= std::numeric_limits<int>::max(); }

}  // namespace

struct BlasLinear::Impl {
  at::Tensor weight, bias;  // contiguous
  FusedLinearParams params;
  int64_t m = 0, n = 0, k = 0;
  Sgemm sgemm = nullptr;

  // Output columns [n0, n1): bias and residual in, the product added, the
  // activation applied.
  void run_part(const float* x, const float* residual, float* out, int64_t n0,
                int64_t n1) const {
    const float* b = bias.defined() ? bias.data_ptr<float>() : nullptr;
    const bool accumulate = b != nullptr || residual != nullptr;
    if (accumulate) {
      for (int64_t i = 0; i < m; ++i) {
        float* row = out + i * n;
        const float* r = residual ? residual + i * n : nullptr;
        for (int64_t j = n0; j < n1; ++j) {
          row[j] = (b ? b[j] : 0.0f) + (r ? r[j] : 0.0f);
        }
      }
    }
    sgemm(kRowMajor, kNoTrans, kTrans, static_cast<int>(m),
          static_cast<int>(n1 - n0), static_cast<int>(k), 1.0f, x,
          static_cast<int>(k), weight.data_ptr<float>() + n0 * k,
          static_cast<int>(k), accumulate ? 1.0f : 0.0f, out + n0,
          static_cast<int>(n));
  }
};

bool BlasLinear::available() { return openblas_sgemm() != nullptr; }

std::unique_ptr<BlasLinear> BlasLinear::create(const at::Tensor& weight,
                                               const at::Tensor& bias,
                                               const FusedLinearParams& p,
                                               std::vector<int64_t> in) {
  const Sgemm sgemm = openblas_sgemm();
  if (sgemm == nullptr || !fused_linear_supported(weight, bias, in) ||
      !known_linear_activation(p.activation)) {
    return nullptr;
  }
  FusedLinearShape shape(std::move(in), weight.size(0));
  if (!fits_int(shape.rows) || !fits_int(shape.n) || !fits_int(shape.k)) {
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  impl->m = shape.rows;
  impl->n = shape.n;
  impl->k = shape.k;
  impl->weight = weight.detach().contiguous();
  if (bias.defined()) impl->bias = bias.detach().contiguous();
  impl->params = p;
  impl->sgemm = sgemm;
  return std::unique_ptr<BlasLinear>(
      new BlasLinear(std::move(impl), std::move(shape)));
}

BlasLinear::BlasLinear(std::unique_ptr<Impl> impl, FusedLinearShape shape)
    : FusedLinearKernel(std::move(shape)), impl_(std::move(impl)) {}
BlasLinear::~BlasLinear() = default;

void BlasLinear::run(const at::Tensor& input, const at::Tensor* residual,
                     const at::Tensor& out) {
  const Impl& d = *impl_;
  const at::Tensor x = input.contiguous();
  at::Tensor r;
  if (d.params.has_residual) r = residual->contiguous();
  const int64_t parts = std::max<int64_t>(
      1, std::min<int64_t>(at::get_num_threads(), d.n / kMinColumns));
  // Columns per part, a multiple of kMinColumns.
  const int64_t width =
      ((d.n + parts - 1) / parts + kMinColumns - 1) / kMinColumns * kMinColumns;
  OneBlasThread one;
  at::parallel_for(0, parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) {
      const int64_t n0 = part * width, n1 = std::min(d.n, n0 + width);
      if (n0 >= n1) continue;
      d.run_part(x.data_ptr<float>(),
                 r.defined() ? r.data_ptr<float>() : nullptr,
                 out.data_ptr<float>(), n0, n1);
      activate_columns(out, n0, n1, d.params);
    }
  });
}

void BlasLinear::evict_weights() const {
  flush_from_caches(impl_->weight.data_ptr(), impl_->weight.nbytes());
}

}  // namespace fx
