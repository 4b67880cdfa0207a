#include "sdk_examples/tracing/torchvision_models.h"

#include <cmath>
#include <string>

namespace fx::examples {

namespace nn = torch::nn;

namespace {

// torchvision's `forward(self, x: Tensor) -> Tensor`.
constexpr const char* kSignature = "x : torch.Tensor -> torch.Tensor";

nn::Conv2d conv2d(int64_t in, int64_t out, int64_t kernel, int64_t stride,
                  int64_t padding, int64_t groups = 1) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, kernel)
                        .stride(stride)
                        .padding(padding)
                        .groups(groups)
                        .bias(false));
}

// torchvision.ops.Conv2dNormActivation(..., activation_layer=nn.ReLU6): a
// Sequential of Conv2d, BatchNorm2d and ReLU6.
fx::Sequential conv_bn_relu6(int64_t in, int64_t out, int64_t kernel,
                             int64_t stride, int64_t groups = 1) {
  return fx::sequential(
      conv2d(in, out, kernel, stride, (kernel - 1) / 2, groups),
      nn::BatchNorm2d(out), nn::ReLU6(nn::ReLU6Options().inplace(true)));
}

// torchvision's _make_divisible(v, 8).
int64_t make_divisible(double v, int64_t divisor = 8) {
  int64_t new_v = std::max<int64_t>(
      divisor, static_cast<int64_t>(v + divisor / 2.0) / divisor * divisor);
  if (new_v < 0.9 * v) new_v += divisor;
  return new_v;
}

}  // namespace

BasicBlock::BasicBlock(int64_t inplanes, int64_t planes, int64_t stride,
                       nn::Sequential ds) {
  conv1 = register_module("conv1", conv2d(inplanes, planes, 3, stride, 1));
  bn1 = register_module("bn1", nn::BatchNorm2d(planes));
  relu = register_module("relu", nn::ReLU(nn::ReLUOptions().inplace(true)));
  conv2 = register_module("conv2", conv2d(planes, planes, 3, 1, 1));
  bn2 = register_module("bn2", nn::BatchNorm2d(planes));
  if (!ds.is_empty()) downsample = register_module("downsample", ds);
}

Value BasicBlock::forward(Value x) {
  Value identity = x;
  Value out = conv1(x);
  out = bn1(out);
  out = relu(out);
  out = conv2(out);
  out = bn2(out);
  if (!downsample.holder().is_empty()) identity = downsample(x);
  out += identity;
  out = relu(out);
  return out;
}

ResNet18::ResNet18(int64_t num_classes) : fx::Module<ResNet18>(kSignature) {
  conv1 = register_module("conv1", conv2d(3, 64, 7, 2, 3));
  bn1 = register_module("bn1", nn::BatchNorm2d(64));
  relu = register_module("relu", nn::ReLU(nn::ReLUOptions().inplace(true)));
  maxpool = register_module(
      "maxpool", nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1)));
  layer1 = register_module("layer1", make_layer(64, 2, 1));
  layer2 = register_module("layer2", make_layer(128, 2, 2));
  layer3 = register_module("layer3", make_layer(256, 2, 2));
  layer4 = register_module("layer4", make_layer(512, 2, 2));
  avgpool = register_module(
      "avgpool", nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({1, 1})));
  fc = register_module("fc", nn::Linear(512, num_classes));
}

nn::Sequential ResNet18::make_layer(int64_t planes, int64_t blocks,
                                    int64_t stride) {
  nn::Sequential downsample{nullptr};
  if (stride != 1 || inplanes_ != planes) {
    downsample = nn::Sequential(conv2d(inplanes_, planes, 1, stride, 0),
                                nn::BatchNorm2d(planes));
  }
  nn::Sequential layer;
  layer->push_back(
      std::make_shared<BasicBlock>(inplanes_, planes, stride, downsample));
  inplanes_ = planes;
  for (int64_t i = 1; i < blocks; ++i) {
    layer->push_back(std::make_shared<BasicBlock>(inplanes_, planes, 1,
                                                  nn::Sequential{nullptr}));
  }
  return layer;
}

Value ResNet18::forward(Value x) {
  x = conv1(x);
  x = bn1(x);
  x = relu(x);
  x = maxpool(x);
  x = layer1(x);
  x = layer2(x);
  x = layer3(x);
  x = layer4(x);
  x = avgpool(x);
  x = th::flatten(x, 1);
  x = fc(x);
  return x;
}

InvertedResidual::InvertedResidual(int64_t inp, int64_t oup, int64_t stride,
                                   int64_t expand_ratio)
    : use_res_connect(stride == 1 && inp == oup) {
  int64_t hidden_dim = static_cast<int64_t>(std::round(inp * expand_ratio));
  fx::Sequential layers = fx::sequential();
  if (expand_ratio != 1) {
    layers->push_back(conv_bn_relu6(inp, hidden_dim, 1, 1));
  }
  layers->push_back(conv_bn_relu6(hidden_dim, hidden_dim, 3, stride,
                                  /*groups=*/hidden_dim));
  layers->push_back(conv2d(hidden_dim, oup, 1, 1, 0));
  layers->push_back(nn::BatchNorm2d(oup));
  conv = register_module("conv", layers);
}

Value InvertedResidual::forward(Value x) {
  if (use_res_connect) return x + conv(x);
  return conv(x);
}

MobileNetV2::MobileNetV2(int64_t num_classes)
    : fx::Module<MobileNetV2>(kSignature) {
  const int64_t settings[][4] = {
      // t, c, n, s
      {1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2},  {6, 64, 4, 2},
      {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1},
  };
  int64_t input_channel = make_divisible(32.0);
  int64_t last_channel = make_divisible(1280.0);
  fx::Sequential f = fx::sequential();
  f->push_back(conv_bn_relu6(3, input_channel, 3, 2));
  for (const auto& s : settings) {
    int64_t output_channel = make_divisible(static_cast<double>(s[1]));
    for (int64_t i = 0; i < s[2]; ++i) {
      f->push_back(std::make_shared<InvertedResidual>(
          input_channel, output_channel, i == 0 ? s[3] : 1, s[0]));
      input_channel = output_channel;
    }
  }
  f->push_back(conv_bn_relu6(input_channel, last_channel, 1, 1));
  features = register_module("features", f);
  classifier = register_module(
      "classifier",
      fx::sequential(nn::Dropout(0.2), nn::Linear(last_channel, num_classes)));
}

Value MobileNetV2::forward(Value x) {
  x = features(x);
  x = F::adaptive_avg_pool2d(x, fx::tuple({1, 1}));
  x = th::flatten(x, 1);
  x = classifier(x);
  return x;
}

}  // namespace fx::examples
