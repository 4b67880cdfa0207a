// The product behind fx::PanelLinear (panel_linear.h): c = a @ w^T + bias
// [+ residual] [then ReLU], on weights packed in column panels, each panel's
// next block of rows fetched into the L2 cache while the block before it
// computes. panel_gemm_avx512.cc is compiled for AVX-512F alone, so call
// panel_gemm() only when panel_gemm_supported() says the CPU has it.
//
// Why a kernel of our own: at batch 1 a network's linear layers read weights
// that no cache holds (the layers between two runs of a linear stream
// every other layer's weights through the caches). oneDNN 2.6's matmul and
// the BLAS read each block of weights from memory the moment they first
// multiply with it: on a transformer's projections at 128 tokens (d_model
// 512) oneDNN takes 10-15% longer so than with them in cache
// (BENCHMARKS.md, issue 35). Here the block computed next is prefetched a
// few lines at a time during the current block's products. With 128 rows
// that hides the memory entirely; with few rows (49, resnet50's last
// stage) the products are too short and the memory's bandwidth bounds it.
//
// The packed weights: ceil(n / kPanelWidth) panels, panel p holding output
// columns [p * kPanelWidth, (p + 1) * kPanelWidth) as k rows of kPanelWidth
// floats (row r: w[p * kPanelWidth + j][r] for j in the panel), columns
// past n zero. `bias`, when given, has ceil(n / kPanelWidth) * kPanelWidth
// floats (zero past n). Results equal at::linear's plus the residual within
// float32 rounding: each output starts at its bias and accumulates the
// products in k order, then the residual is added and the ReLU applied, as
// the reference does. With k over kPanelBlockDepth the partial sums go
// through c, so the residual must not be c itself.
#ifndef FX_CORE_COMPILE_PANEL_GEMM_H_
#define FX_CORE_COMPILE_PANEL_GEMM_H_

#include <cstdint>

namespace fx {

// Output columns per panel: three AVX-512 vectors.
constexpr int64_t kPanelWidth = 48;
// The deepest block of k computed at once (a panel's block: 96 KiB). Over
// it, partial sums go through c.
constexpr int64_t kPanelBlockDepth = 512;

struct PanelGemm {
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;  // [m, k], rows lda floats apart
  int64_t lda = 0;
  const float* panels = nullptr;
  const float* bias = nullptr;      // null: none
  const float* residual = nullptr;  // [m, n], rows ldr floats apart; or null
  int64_t ldr = 0;
  float* c = nullptr;  // [m, n], rows ldc floats apart
  int64_t ldc = 0;
  bool relu = false;
};

bool panel_gemm_supported();

// The number of panels for n output columns.
inline int64_t panel_count(int64_t n) {
  return (n + kPanelWidth - 1) / kPanelWidth;
}

// Computes the output columns of panels [first, last) for every row: a
// thread's share. Panels of one call are computed in order, and nothing
// outside them is written.
void panel_gemm(const PanelGemm& g, int64_t first, int64_t last);

}  // namespace fx

#endif  // FX_CORE_COMPILE_PANEL_GEMM_H_
