// resnet18 in plain LibTorch (torch::nn modules, at:: calls; no fx::Value),
// the same computation as torchvision.models.resnet18, for the capture
// suites.
#ifndef TESTS_FX_CORE_CAPTURE_PLAIN_RESNET_H_
#define TESTS_FX_CORE_CAPTURE_PLAIN_RESNET_H_

#include <ATen/ATen.h>
#include <torch/nn.h>

#include <cstdint>
#include <string>

namespace fx::testing {

struct PlainBasicBlockImpl : torch::nn::Module {
  PlainBasicBlockImpl(int64_t in, int64_t out, int64_t stride) {
    using torch::nn::Conv2dOptions;
    conv1 = register_module(
        "conv1",
        torch::nn::Conv2d(
            Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false)));
    bn1 = register_module("bn1", torch::nn::BatchNorm2d(out));
    conv2 = register_module(
        "conv2",
        torch::nn::Conv2d(Conv2dOptions(out, out, 3).padding(1).bias(false)));
    bn2 = register_module("bn2", torch::nn::BatchNorm2d(out));
    if (stride != 1 || in != out) {
      downsample = register_module(
          "downsample",
          torch::nn::Sequential(
              torch::nn::Conv2d(
                  Conv2dOptions(in, out, 1).stride(stride).bias(false)),
              torch::nn::BatchNorm2d(out)));
    }
  }
  at::Tensor forward(const at::Tensor& x) {
    at::Tensor out = bn1(conv1(x)).relu_();  // nn.ReLU(inplace=True)
    out = bn2(conv2(out));
    at::Tensor identity = downsample ? downsample->forward(x) : x;
    out += identity;
    return out.relu_();
  }
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  torch::nn::Sequential downsample{nullptr};
};
TORCH_MODULE(PlainBasicBlock);

struct PlainResNet18Impl : torch::nn::Module {
  PlainResNet18Impl() {
    using torch::nn::Conv2dOptions;
    conv1 = register_module(
        "conv1", torch::nn::Conv2d(
                     Conv2dOptions(3, 64, 7).stride(2).padding(3).bias(false)));
    bn1 = register_module("bn1", torch::nn::BatchNorm2d(64));
    maxpool = register_module(
        "maxpool", torch::nn::MaxPool2d(
                       torch::nn::MaxPool2dOptions(3).stride(2).padding(1)));
    int64_t in = 64;
    const int64_t widths[] = {64, 128, 256, 512};
    for (int i = 0; i < 4; ++i) {
      torch::nn::Sequential layer;
      const int64_t stride = i == 0 ? 1 : 2;
      layer->push_back(PlainBasicBlock(in, widths[i], stride));
      layer->push_back(PlainBasicBlock(widths[i], widths[i], 1));
      layers[i] =
          register_module("layer" + std::to_string(i + 1), std::move(layer));
      in = widths[i];
    }
    avgpool = register_module("avgpool",
                              torch::nn::AdaptiveAvgPool2d(
                                  torch::nn::AdaptiveAvgPool2dOptions({1, 1})));
    fc = register_module("fc", torch::nn::Linear(512, 1000));
  }
  at::Tensor forward(const at::Tensor& input) {
    at::Tensor x = maxpool(bn1(conv1(input)).relu_());
    for (auto& layer : layers) x = layer->forward(x);
    return fc(at::flatten(avgpool(x), 1));
  }
  torch::nn::Conv2d conv1{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr};
  torch::nn::MaxPool2d maxpool{nullptr};
  torch::nn::Sequential layers[4];
  torch::nn::AdaptiveAvgPool2d avgpool{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(PlainResNet18);

}  // namespace fx::testing

#endif  // TESTS_FX_CORE_CAPTURE_PLAIN_RESNET_H_
