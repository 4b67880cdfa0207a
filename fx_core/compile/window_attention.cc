#include "fx_core/compile/window_attention.h"

#include <ATen/ATen.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <utility>

#include "fx_core/compile/attention_tile.h"
#include "fx_core/compile/linear_choice.h"
#include "fx_core/compile/onednn_matmul.h"
#include "fx_core/compile/parallel_for.h"
#include "fx_core/runtime/ops/window_attention.h"

namespace fx {
namespace {

// The sizes of one call: the input [B, H, W, C], padded to whole windows
// [B, pad_h, pad_w, C]; `rows` window tokens (B * windows * N) of C.
struct Geometry {
  int64_t B = 0, H = 0, W = 0, C = 0, heads = 0, head_dim = 0;
  int64_t wh = 0, ww = 0, pad_h = 0, pad_w = 0, shift_h = 0, shift_w = 0;
  int64_t N = 0, windows = 0, rows = 0;  // windows: of one image
  bool shifted() const { return shift_h + shift_w > 0; }
};

bool int_pair_at_least(const std::vector<int64_t>& v, int64_t min) {
  return v.size() == 2 && v[0] >= min && v[1] >= min;
}

// The geometry, or false when the call is not one create() takes.
bool geometry(const WindowAttentionParams& p, const std::vector<int64_t>& in,
              Geometry* g) {
  if (in.size() != 4 || !int_pair_at_least(p.window_size, 1) ||
      !int_pair_at_least(p.shift_size, 0) || p.num_heads < 1) {
    return false;
  }
  for (int64_t d : in) {
    if (d < 1) return false;
  }
  g->B = in[0], g->H = in[1], g->W = in[2], g->C = in[3];
  if (g->C % p.num_heads != 0) return false;
  g->heads = p.num_heads;
  g->head_dim = g->C / p.num_heads;
  g->wh = p.window_size[0], g->ww = p.window_size[1];
  g->pad_h = (g->H + g->wh - 1) / g->wh * g->wh;
  g->pad_w = (g->W + g->ww - 1) / g->ww * g->ww;
  const std::vector<int64_t> shift =
      ops::effective_shift(g->pad_h, g->pad_w, p.window_size, p.shift_size);
  g->shift_h = shift[0], g->shift_w = shift[1];
  g->N = g->wh * g->ww;
  g->windows = (g->pad_h / g->wh) * (g->pad_w / g->ww);
  g->rows = g->B * g->windows * g->N;
  return true;
}

// For each window token (row), the input token it holds (b * H * W + h * W
// + w) after the roll, or -1 for the padding. The result goes back to the
// same place (the roll back undoes the roll).
std::vector<int64_t> token_sources(const Geometry& g) {
  std::vector<int64_t> src;
  src.reserve(g.rows);
  for (int64_t b = 0; b < g.B; ++b) {
    for (int64_t wy = 0; wy < g.pad_h / g.wh; ++wy) {
      for (int64_t wx = 0; wx < g.pad_w / g.ww; ++wx) {
        for (int64_t i = 0; i < g.wh; ++i) {
          for (int64_t j = 0; j < g.ww; ++j) {
            const int64_t h = (wy * g.wh + i + g.shift_h) % g.pad_h;
            const int64_t w = (wx * g.ww + j + g.shift_w) % g.pad_w;
            src.push_back(h < g.H && w < g.W ? (b * g.H + h) * g.W + w : -1);
          }
        }
      }
    }
  }
  return src;
}

bool float_tensor(const at::Tensor& t, std::vector<int64_t> sizes) {
  return t.defined() && t.scalar_type() == at::kFloat && t.device().is_cpu() &&
         t.layout() == at::kStrided && t.sizes() == c10::IntArrayRef(sizes);
}

// The per-thread memory the intermediate matrices are carved from.
at::Tensor& thread_scratch(int64_t floats) {
  thread_local at::Tensor scratch;
  if (!scratch.defined() || scratch.numel() < floats) {
    scratch = at::empty({floats}, at::kFloat);
  }
  return scratch;
}

// Consecutive 64-byte aligned pieces of one scratch tensor.
class Carver {
 public:
  explicit Carver(const at::Tensor& memory) : memory_(memory) {}
  at::Tensor take(std::vector<int64_t> sizes) {
    int64_t n = 1;
    for (int64_t d : sizes) n *= d;
    at::Tensor piece = memory_.narrow(0, used_, n).view(sizes);
    used_ += (n + 15) / 16 * 16;
    return piece;
  }
  static int64_t floats(const std::vector<int64_t>& pieces) {
    int64_t total = 0;
    for (int64_t n : pieces) total += (n + 15) / 16 * 16;
    return total;
  }

 private:
  at::Tensor memory_;
  int64_t used_ = 0;
};

std::atomic<bool> use_tiles{true};

// Rows a thread copies at least (gather, scatter).
constexpr int64_t kCopyGrain = 512;

// One of the two linears: linear_choice's kernel (weights packed), or
// ATen's linear where it chooses ATen.
struct StepLinear {
  ChosenLinear chosen;
  at::Tensor weight, bias;

  static StepLinear choose(const at::Tensor& weight, const at::Tensor& bias,
                           int64_t rows) {
    return {choose_linear(weight, bias, {}, {rows, weight.size(1)}), weight,
            bias};
  }
  // out [rows, N] = x [rows, K] @ weight^T + bias.
  void run(const at::Tensor& x, at::Tensor& out) const {
    if (chosen.impl) {
      chosen.impl->run(x, nullptr, out);
    } else {
      at::linear_out(
          out, x, weight,
          bias.defined() ? c10::optional<at::Tensor>(bias) : c10::nullopt);
    }
  }
};

}  // namespace

void set_window_attention_tiles(bool use) { use_tiles = use; }

struct WindowAttention::Impl {
  Geometry g;
  std::vector<int64_t> in_sizes, bias_sizes;
  std::vector<int64_t> sources;  // token_sources(g)
  at::Tensor mask;               // [1, windows, 1, N, N]; shifted only
  StepLinear qkv, proj;
  // The attention core: attention_tile per window and head where the CPU
  // has AVX2, else the two matmuls with ATen's adds and softmax between.
  bool tiles = false;
  std::unique_ptr<OnednnMatmul> scores, mix;

  bool make_matmuls();
  void gather(const float* in, float* x) const;
  void attend_in_tiles(const at::Tensor& qkv, const at::Tensor& bias,
                       const at::Tensor& y) const;
  void attend_with_matmuls(const at::Tensor& qkv, const at::Tensor& bias,
                           const at::Tensor& y, Carver& carve) const;
  void scatter(const float* y, float* out) const;
  int64_t scratch_floats() const {
    const int64_t attn = tiles ? 0 : g.rows / g.N * g.heads * g.N * g.N;
    return Carver::floats(
        {g.rows * g.C, g.rows * 3 * g.C, attn, attn, g.rows * g.C});
  }
};

// The padded, rolled input as window tokens, one row each.
// Rows spread over LibTorch's threads, as the linears around them are.
void WindowAttention::Impl::gather(const float* in, float* x) const {
  const size_t bytes = g.C * sizeof(float);
  at::parallel_for(0, g.rows, kCopyGrain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      if (sources[r] < 0) {
        std::memset(x + r * g.C, 0, bytes);
      } else {
        std::memcpy(x + r * g.C, in + sources[r] * g.C, bytes);
      }
    }
  });
}

// The window tokens' results back where their inputs came from.
void WindowAttention::Impl::scatter(const float* y, float* out) const {
  const size_t bytes = g.C * sizeof(float);
  at::parallel_for(0, g.rows, kCopyGrain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      if (sources[r] >= 0) {
        std::memcpy(out + sources[r] * g.C, y + r * g.C, bytes);
      }
    }
  });
}

// Each window's heads through attention_tile, written side by side in y
// ([rows, C], proj's input), windows and heads spread over LibTorch's
// threads.
void WindowAttention::Impl::attend_in_tiles(const at::Tensor& qkv,
                                            const at::Tensor& bias,
                                            const at::Tensor& y) const {
  const int64_t C = g.C, N = g.N, hd = g.head_dim, heads = g.heads;
  const at::Tensor b = bias.contiguous();
  const float* qkv0 = qkv.data_ptr<float>();
  const float* bias0 = b.data_ptr<float>();
  const float* mask0 = mask.defined() ? mask.data_ptr<float>() : nullptr;
  float* y0 = y.data_ptr<float>();
  const auto scale = static_cast<float>(std::pow(double(hd), -0.5));
  const int64_t scratch = attention_tile_scratch(N, hd);
  at::parallel_for(0, g.rows / N * heads, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> buffer(scratch);
    for (int64_t i = begin; i < end; ++i) {
      const int64_t w = i / heads, h = i % heads;
      AttentionTile t;
      t.q = qkv0 + w * N * 3 * C + h * hd;
      t.k = t.q + C;
      t.v = t.q + 2 * C;
      t.qkv_stride = 3 * C;
      t.bias = bias0 + h * N * N;
      t.mask = mask0 ? mask0 + (w % g.windows) * N * N : nullptr;
      t.out = y0 + w * N * C + h * hd;
      t.out_stride = C;
      attention_tile(t, N, hd, scale, buffer.data());
    }
  });
}

// q @ k^T * scale and probs @ v on oneDNN, reading q, k and v in place and
// writing the heads side by side in y; the bias and mask added and the
// softmax taken by ATen, on scratch matrices.
void WindowAttention::Impl::attend_with_matmuls(const at::Tensor& qkv,
                                                const at::Tensor& bias,
                                                const at::Tensor& y,
                                                Carver& carve) const {
  const int64_t C = g.C, N = g.N, hd = g.head_dim;
  const int64_t batch_windows = g.rows / N;
  at::Tensor logits = carve.take({batch_windows, g.heads, N, N});
  at::Tensor probs = carve.take({batch_windows, g.heads, N, N});
  auto part = [&](int64_t i, std::vector<int64_t> sizes,
                  std::vector<int64_t> strides) {
    return qkv.as_strided(sizes, strides, qkv.storage_offset() + i * C);
  };
  const at::Tensor q =
      part(0, {batch_windows, g.heads, N, hd}, {N * 3 * C, hd, 3 * C, 1});
  const at::Tensor k_t =
      part(1, {batch_windows, g.heads, hd, N}, {N * 3 * C, hd, 1, 3 * C});
  const at::Tensor v =
      part(2, {batch_windows, g.heads, N, hd}, {N * 3 * C, hd, 3 * C, 1});
  scores->run(q, k_t, logits);
  logits.add_(bias.reshape({1, g.heads, N, N}));
  if (g.shifted()) logits.view({g.B, g.windows, g.heads, N, N}).add_(mask);
  at::_softmax_out(probs, logits, -1, false);
  mix->run(probs, v, y);
}

// The oneDNN matmuls of the path without tiles; false when oneDNN has none.
// q, k and v of window w, head h: qkv[w * N + n, {0, 1, 2} * C + h * hd].
bool WindowAttention::Impl::make_matmuls() {
  const int64_t C = g.C, N = g.N, hd = g.head_dim;
  const int64_t batch_windows = g.rows / N;
  const StridedLayout q{{batch_windows, g.heads, N, hd},
                        {N * 3 * C, hd, 3 * C, 1}};
  const StridedLayout k_t{{batch_windows, g.heads, hd, N},
                          {N * 3 * C, hd, 1, 3 * C}};
  const StridedLayout& v = q;  // 2 * C further on
  const StridedLayout probs{{batch_windows, g.heads, N, N},
                            {g.heads * N * N, N * N, N, 1}};
  scores = OnednnMatmul::create(q, k_t, std::pow(double(hd), -0.5));
  // probs @ v into [windows, N, heads, hd]: proj's [rows, C] input.
  mix = OnednnMatmul::create(probs, v, 1.0, {N * C, hd, C, 1});
  return scores && mix;
}

std::unique_ptr<WindowAttention> WindowAttention::create(
    const at::Tensor& qkv_weight, const at::Tensor& qkv_bias,
    const at::Tensor& proj_weight, const at::Tensor& proj_bias,
    const WindowAttentionParams& params, std::vector<int64_t> input_sizes,
    std::vector<int64_t> bias_sizes) {
  auto impl = std::make_unique<Impl>();
  Geometry& g = impl->g;
  if (!geometry(params, input_sizes, &g)) return nullptr;
  const int64_t C = g.C, N = g.N;
  if (!float_tensor(qkv_weight, {3 * C, C}) ||
      !float_tensor(proj_weight, {C, C}) ||
      (qkv_bias.defined() && !float_tensor(qkv_bias, {3 * C})) ||
      (proj_bias.defined() && !float_tensor(proj_bias, {C}))) {
    return nullptr;
  }
  if (bias_sizes != std::vector<int64_t>{1, g.heads, N, N} &&
      bias_sizes != std::vector<int64_t>{g.heads, N, N}) {
    return nullptr;
  }
  impl->tiles = use_tiles && attention_tile_supported();
  if (!impl->tiles && !impl->make_matmuls()) return nullptr;
  // Last: the linears' choice times them.
  impl->qkv = StepLinear::choose(qkv_weight, qkv_bias, g.rows);
  impl->proj = StepLinear::choose(proj_weight, proj_bias, g.rows);
  if (g.shifted()) {
    impl->mask = ops::shifted_window_mask(g.pad_h, g.pad_w, params.window_size,
                                          {g.shift_h, g.shift_w},
                                          at::TensorOptions(at::kFloat))
                     .view({1, g.windows, 1, N, N});
  }
  impl->sources = token_sources(g);
  impl->in_sizes = std::move(input_sizes);
  impl->bias_sizes = std::move(bias_sizes);
  return std::unique_ptr<WindowAttention>(new WindowAttention(std::move(impl)));
}

WindowAttention::WindowAttention(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
WindowAttention::~WindowAttention() = default;

const std::vector<int64_t>& WindowAttention::input_sizes() const {
  return impl_->in_sizes;
}

const std::vector<int64_t>& WindowAttention::bias_sizes() const {
  return impl_->bias_sizes;
}

void WindowAttention::run(const at::Tensor& input, const at::Tensor& bias,
                          const at::Tensor& out) {
  Impl& m = *impl_;
  const Geometry& g = m.g;
  Carver carve(thread_scratch(m.scratch_floats()));
  at::Tensor x = carve.take({g.rows, g.C});  // later the heads' results
  at::Tensor qkv = carve.take({g.rows, 3 * g.C});
  at::Tensor y = carve.take({g.rows, g.C});
  m.gather(input.contiguous().data_ptr<float>(), x.data_ptr<float>());
  m.qkv.run(x, qkv);
  if (m.tiles) {
    m.attend_in_tiles(qkv, bias, x);
  } else {
    m.attend_with_matmuls(qkv, bias, x, carve);
  }
  m.proj.run(x, y);
  m.scatter(y.data_ptr<float>(), out.data_ptr<float>());
}

}  // namespace fx
