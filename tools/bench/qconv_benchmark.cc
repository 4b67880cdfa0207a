// mobilenet_v2's 52 quantized convolutions at batch 1, 224x224 (torchvision's
// layout: the stem, then per inverted residual block a 1x1 expansion, a 3x3
// depthwise convolution and a 1x1 projection, then the 1x1 to 1280
// channels), run one after the other as each engine runs them:
//   LibTorchConvs: quantized::conv2d.new on LibTorch's onednn engine, what
//     PyTorch's convert_fx model and the SDK's registry call, a new output
//     per call;
//   LibTorchConvsAndHardtanh: the same, each expansion and depthwise
//     convolution followed by the quantized hardtanh (ReLU6) that model runs;
//   OnednnQConvs: fx::OnednnQConv (fx_core/compile/onednn_qconv.h), the
//     ReLU6 as a clip post-op, into outputs allocated once.
// Both give the same bytes (tests/fx_core/compile:onednn_qconv_test). Threads:
// LibTorch's default unless --threads N is given first. `--layers` prints
// each convolution's kernel and median time instead.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "fx_core/compile/onednn_qconv.h"

namespace {

struct ConvShape {
  int64_t in_channels, size, out_channels, kernel, stride, groups;
  bool relu6;
};

// torchvision's mobilenet_v2: (expansion t, channels c, blocks n, stride s).
std::vector<ConvShape> mobilenet_v2_convs() {
  std::vector<ConvShape> convs{{3, 224, 32, 3, 2, 1, true}};
  const int64_t settings[][4] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2},
                                 {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2},
                                 {6, 320, 1, 1}};
  int64_t c = 32, size = 112;
  for (const auto& [t, out, n, s] : settings) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t stride = i == 0 ? s : 1, hidden = c * t;
      if (t != 1) convs.push_back({c, size, hidden, 1, 1, 1, true});
      convs.push_back({hidden, size, hidden, 3, stride, hidden, true});
      size = (size + 2 - 3) / stride + 1;
      convs.push_back({hidden, size, out, 1, 1, 1, false});
      c = out;
    }
  }
  convs.push_back({320, 7, 1280, 1, 1, 1, true});
  return convs;
}

struct Layer {
  at::Tensor input, weight, bias;
  fx::QuantizedConvParams params;
  c10::IValue packed;
  std::unique_ptr<fx::OnednnQConv> conv;
  at::Tensor out;
};

Layer make_layer(const ConvShape& s) {
  Layer l;
  const int64_t pad = s.kernel / 2;
  at::Tensor x = at::rand({1, s.in_channels, s.size, s.size}) * 4;
  l.input = at::quantize_per_tensor(
      x.contiguous(at::MemoryFormat::ChannelsLast), 4.0 / 255, 0, at::kQUInt8);
  at::Tensor w = at::randn({s.out_channels, s.in_channels / s.groups, s.kernel,
                            s.kernel}) *
                 0.1;
  at::Tensor scales = w.abs().amax({1, 2, 3}).to(at::kDouble) / 127;
  l.weight = at::quantize_per_channel(
      w, scales, at::zeros({s.out_channels}, at::kLong), 0, at::kQInt8);
  l.bias = at::randn({s.out_channels}) * 0.1;
  fx::QuantizedConvParams& p = l.params;
  p.stride = {s.stride, s.stride};
  p.padding = {pad, pad};
  p.dilation = {1, 1};
  p.groups = s.groups;
  p.input_scale = l.input.q_scale();
  p.output_scale = 0.05;
  p.output_zero_point = s.relu6 ? 0 : 128;
  if (s.relu6) p.clamp = std::pair{0.0, 6.0};
  std::vector<c10::IValue> stack{l.weight,  l.bias,     p.stride,
                                 p.padding, p.dilation, p.groups};
  c10::Dispatcher::singleton()
      .findSchemaOrThrow("quantized::conv2d_prepack", "")
      .callBoxed(&stack);
  l.packed = stack.at(0);
  l.conv = fx::OnednnQConv::create(l.weight, l.bias, p, l.input.sizes().vec());
  if (l.conv == nullptr) std::abort();
  l.out = at::_empty_affine_quantized(
      l.conv->output_sizes(), at::TensorOptions().dtype(at::kQUInt8),
      p.output_scale, p.output_zero_point, at::MemoryFormat::ChannelsLast);
  return l;
}

std::vector<Layer>& layers() {
  static std::vector<Layer>* all = [] {
    at::globalContext().setQEngine(at::QEngine::ONEDNN);
    at::manual_seed(0);
    auto* v = new std::vector<Layer>;
    for (const ConvShape& s : mobilenet_v2_convs()) v->push_back(make_layer(s));
    return v;
  }();
  return *all;
}

void run_libtorch(benchmark::State& state, bool hardtanh) {
  const c10::OperatorHandle conv =
      c10::Dispatcher::singleton().findSchemaOrThrow("quantized::conv2d",
                                                     "new");
  std::vector<Layer>& all = layers();
  for (auto _ : state) {
    for (Layer& l : all) {
      std::vector<c10::IValue> stack{l.input, l.packed, l.params.output_scale,
                                     l.params.output_zero_point};
      conv.callBoxed(&stack);
      at::Tensor y = stack.at(0).toTensor();
      if (hardtanh && l.params.clamp) y = at::hardtanh(y, 0.0, 6.0);
      benchmark::DoNotOptimize(y.data_ptr());
    }
  }
  state.counters["convolutions"] = static_cast<double>(all.size());
}

void LibTorchConvs(benchmark::State& state) { run_libtorch(state, false); }
void LibTorchConvsAndHardtanh(benchmark::State& state) {
  run_libtorch(state, true);
}

void OnednnQConvs(benchmark::State& state) {
  std::vector<Layer>& all = layers();
  for (auto _ : state) {
    for (Layer& l : all) l.conv->run(l.input, l.out);
    benchmark::DoNotOptimize(all.back().out.data_ptr());
  }
  state.counters["convolutions"] = static_cast<double>(all.size());
}

BENCHMARK(LibTorchConvs)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(LibTorchConvsAndHardtanh)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);
BENCHMARK(OnednnQConvs)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// --layers: each convolution's shape, oneDNN's kernel for it and both
// engines' median time over 200 calls, in us.
void print_layers() {
  std::vector<Layer>& all = layers();
  const c10::OperatorHandle conv =
      c10::Dispatcher::singleton().findSchemaOrThrow("quantized::conv2d",
                                                     "new");
  auto median_us = [](auto&& call) {
    std::vector<double> t;
    for (int i = 0; i < 200; ++i) {
      const auto start = std::chrono::steady_clock::now();
      call();
      t.push_back(std::chrono::duration<double, std::micro>(
                      std::chrono::steady_clock::now() - start)
                      .count());
    }
    std::nth_element(t.begin(), t.begin() + 100, t.end());
    return t[100];
  };
  double total_libtorch = 0, total_ours = 0;
  for (Layer& l : all) {
    const double libtorch = median_us([&] {
      std::vector<c10::IValue> stack{l.input, l.packed, l.params.output_scale,
                                     l.params.output_zero_point};
      conv.callBoxed(&stack);
    });
    const double ours = median_us([&] { l.conv->run(l.input, l.out); });
    total_libtorch += libtorch;
    total_ours += ours;
    std::printf(
        "%5lld -> %5lld, %3lldx%-3lld k%lld s%lld g%-5lld %-28s %8.1f %8.1f\n",
        static_cast<long long>(l.input.size(1)),
        static_cast<long long>(l.weight.size(0)),
        static_cast<long long>(l.input.size(2)),
        static_cast<long long>(l.input.size(3)),
        static_cast<long long>(l.weight.size(2)),
        static_cast<long long>(l.params.stride[0]),
        static_cast<long long>(l.params.groups),
        l.conv->implementation().c_str(), libtorch, ours);
  }
  std::printf("total: LibTorch %.1f us, OnednnQConv %.1f us\n", total_libtorch,
              total_ours);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 && std::strcmp(argv[1], "--threads") == 0) {
    at::set_num_threads(std::atoi(argv[2]));
    argv[2] = argv[0];
    argc -= 2;
    argv += 2;
  }
  if (argc > 1 && std::strcmp(argv[1], "--layers") == 0) {
    print_layers();
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
