#include "sdk_examples/capture/plain_models.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/dropout.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

namespace fx::examples {

namespace nn = torch::nn;

namespace {

nn::Conv2d conv2d(int64_t in, int64_t out, int64_t kernel, int64_t stride,
                  int64_t padding, int64_t groups = 1) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, kernel)
                        .stride(stride)
                        .padding(padding)
                        .groups(groups)
                        .bias(false));
}

// A Sequential another Sequential can hold (a non-template forward).
struct NestedSequentialImpl : nn::SequentialImpl {
  using SequentialImpl::SequentialImpl;
  at::Tensor forward(const at::Tensor& x) { return SequentialImpl::forward(x); }
};
TORCH_MODULE(NestedSequential);

// torchvision.ops.Conv2dNormActivation(..., activation_layer=nn.ReLU6).
// Python's nn.ReLU6 is nn.Hardtanh(0.0, 6.0): it calls hardtanh_(x, 0.0,
// 6.0), where torch::nn::ReLU6 calls relu6_, whose kernel passes 0 and 6
// (see the README).
NestedSequential conv_bn_relu6(int64_t in, int64_t out, int64_t kernel,
                               int64_t stride, int64_t groups = 1) {
  return NestedSequential(
      conv2d(in, out, kernel, stride, (kernel - 1) / 2, groups),
      nn::BatchNorm2d(out),
      nn::Hardtanh(nn::HardtanhOptions().min_val(0).max_val(6).inplace(true)));
}

// torchvision's _make_divisible(v, 8).
int64_t make_divisible(double v, int64_t divisor = 8) {
  int64_t rounded = std::max<int64_t>(
      divisor, static_cast<int64_t>(v + divisor / 2.0) / divisor * divisor);
  if (rounded < 0.9 * v) rounded += divisor;
  return rounded;
}

// nn.Linear's call as Python spells it for any input rank. (torch::nn::Linear
// calls matmul + add_ for inputs that are not 2-d; see the README.)
at::Tensor linear(const nn::Linear& layer, const at::Tensor& x) {
  return at::linear(x, layer->weight, layer->bias);
}

}  // namespace

PlainBasicBlockImpl::PlainBasicBlockImpl(int64_t in, int64_t out,
                                         int64_t stride) {
  conv1 = register_module("conv1", conv2d(in, out, 3, stride, 1));
  bn1 = register_module("bn1", nn::BatchNorm2d(out));
  conv2 = register_module("conv2", conv2d(out, out, 3, 1, 1));
  bn2 = register_module("bn2", nn::BatchNorm2d(out));
  if (stride != 1 || in != out) {
    downsample = register_module(
        "downsample",
        nn::Sequential(conv2d(in, out, 1, stride, 0), nn::BatchNorm2d(out)));
  }
}

at::Tensor PlainBasicBlockImpl::forward(const at::Tensor& x) {
  at::Tensor out = bn1(conv1(x)).relu_();  // nn.ReLU(inplace=True)
  out = bn2(conv2(out));
  at::Tensor identity = downsample ? downsample->forward(x) : x;
  out += identity;
  return out.relu_();
}

PlainResNet18Impl::PlainResNet18Impl() {
  conv1 = register_module("conv1", conv2d(3, 64, 7, 2, 3));
  bn1 = register_module("bn1", nn::BatchNorm2d(64));
  maxpool = register_module(
      "maxpool", nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1)));
  int64_t in = 64;
  const int64_t widths[] = {64, 128, 256, 512};
  for (int i = 0; i < 4; ++i) {
    nn::Sequential layer;
    layer->push_back(PlainBasicBlock(in, widths[i], i == 0 ? 1 : 2));
    layer->push_back(PlainBasicBlock(widths[i], widths[i], 1));
    layers[i] =
        register_module("layer" + std::to_string(i + 1), std::move(layer));
    in = widths[i];
  }
  avgpool = register_module(
      "avgpool", nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({1, 1})));
  fc = register_module("fc", nn::Linear(512, 1000));
}

at::Tensor PlainResNet18Impl::forward(const at::Tensor& input) {
  at::Tensor x = maxpool(bn1(conv1(input)).relu_());
  for (auto& layer : layers) x = layer->forward(x);
  return fc(at::flatten(avgpool(x), 1));
}

PlainInvertedResidualImpl::PlainInvertedResidualImpl(int64_t in, int64_t out,
                                                     int64_t stride,
                                                     int64_t expand_ratio)
    : use_res_connect(stride == 1 && in == out) {
  const int64_t hidden = in * expand_ratio;
  nn::Sequential layers;
  if (expand_ratio != 1) layers->push_back(conv_bn_relu6(in, hidden, 1, 1));
  layers->push_back(conv_bn_relu6(hidden, hidden, 3, stride, hidden));
  layers->push_back(conv2d(hidden, out, 1, 1, 0));
  layers->push_back(nn::BatchNorm2d(out));
  conv = register_module("conv", std::move(layers));
}

at::Tensor PlainInvertedResidualImpl::forward(const at::Tensor& x) {
  if (use_res_connect) return x + conv->forward(x);
  return conv->forward(x);
}

PlainMobileNetV2Impl::PlainMobileNetV2Impl() {
  const int64_t settings[][4] = {
      // expand ratio, channels, repeats, stride
      {1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2},  {6, 64, 4, 2},
      {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1},
  };
  int64_t in = make_divisible(32.0);
  const int64_t last = make_divisible(1280.0);
  nn::Sequential f;
  f->push_back(conv_bn_relu6(3, in, 3, 2));
  for (const auto& s : settings) {
    const int64_t out = make_divisible(static_cast<double>(s[1]));
    for (int64_t i = 0; i < s[2]; ++i) {
      f->push_back(PlainInvertedResidual(in, out, i == 0 ? s[3] : 1, s[0]));
      in = out;
    }
  }
  f->push_back(conv_bn_relu6(in, last, 1, 1));
  features = register_module("features", std::move(f));
  classifier = register_module(
      "classifier", nn::Sequential(nn::Dropout(0.2), nn::Linear(last, 1000)));
}

at::Tensor PlainMobileNetV2Impl::forward(const at::Tensor& input) {
  at::Tensor x = features->forward(input);
  x = at::adaptive_avg_pool2d(x, {1, 1});
  x = at::flatten(x, 1);
  return classifier->forward(x);
}

PlainBlockImpl::PlainBlockImpl(int64_t dim, int64_t heads, int64_t hidden,
                               int64_t max_len)
    : heads(heads) {
  ln1 = register_module("ln1", nn::LayerNorm(nn::LayerNormOptions({dim})));
  qkv = register_module("qkv", nn::Linear(dim, 3 * dim));
  proj = register_module("proj", nn::Linear(dim, dim));
  ln2 = register_module("ln2", nn::LayerNorm(nn::LayerNormOptions({dim})));
  fc1 = register_module("fc1", nn::Linear(dim, hidden));
  fc2 = register_module("fc2", nn::Linear(hidden, dim));
  mask = register_buffer(
      "mask", at::triu(at::ones({max_len, max_len}), 1).to(at::kBool));
}

at::Tensor PlainBlockImpl::forward(const at::Tensor& x) {
  const int64_t b = x.size(0), t = x.size(1), d = x.size(2);
  const int64_t head_dim = d / heads;
  auto qkv_parts = linear(qkv, ln1(x)).chunk(3, -1);
  auto split_heads = [&](const at::Tensor& y) {
    return y.view({b, t, heads, head_dim}).transpose(1, 2);
  };
  at::Tensor q = split_heads(qkv_parts[0]);
  at::Tensor k = split_heads(qkv_parts[1]);
  at::Tensor v = split_heads(qkv_parts[2]);
  at::Tensor att = at::matmul(q, k.transpose(-2, -1)) *
                   (1.0 / std::sqrt(static_cast<double>(head_dim)));
  att = att.masked_fill(mask.slice(0, 0, t).slice(1, 0, t),
                        -std::numeric_limits<double>::infinity());
  att = at::softmax(att, -1);
  at::Tensor y = at::matmul(att, v).transpose(1, 2).reshape({b, t, d});
  at::Tensor out = x + linear(proj, y);
  return out + linear(fc2, at::gelu(linear(fc1, ln2(out))));
}

SmallTransformerImpl::SmallTransformerImpl(int64_t vocab, int64_t dim,
                                           int64_t heads, int64_t hidden,
                                           int64_t layers, int64_t max_len) {
  embed = register_module("embed", nn::Embedding(vocab, dim));
  pos = register_parameter("pos", at::randn({max_len, dim}) * 0.02);
  blocks = register_module("blocks", nn::ModuleList());
  for (int64_t i = 0; i < layers; ++i) {
    blocks->push_back(PlainBlock(dim, heads, hidden, max_len));
  }
  norm = register_module("norm", nn::LayerNorm(nn::LayerNormOptions({dim})));
  head = register_module("head", nn::Linear(dim, vocab));
}

at::Tensor SmallTransformerImpl::forward(const at::Tensor& ids) {
  // One call per statement: GCC evaluates `a(x) + b(y)`'s operands right
  // to left, Python left to right (see the README).
  at::Tensor x = embed(ids);
  x = x + pos.slice(0, 0, ids.size(1));
  for (const auto& block : *blocks) {
    x = block->as<PlainBlockImpl>()->forward(x);
  }
  return linear(head, norm(x));
}

}  // namespace fx::examples
