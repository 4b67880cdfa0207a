// C++ ports of torchvision 0.14's resnet18 and mobilenet_v2, written with the
// SDK's traceable modules. Module names and structure follow torchvision's
// exactly, so a torchvision state_dict loads by name and fx::symbolic_trace
// gives the graph torch.fx gives for torchvision's model.
#ifndef SDK_EXAMPLES_TRACING_TORCHVISION_MODELS_H_
#define SDK_EXAMPLES_TRACING_TORCHVISION_MODELS_H_

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>

#include <cstdint>
#include <memory>

#include "fx_core/tracer/functions.h"
#include "fx_core/tracer/proxy.h"
#include "fx_core/tracer/tracer.h"

namespace fx::examples {

// torchvision.models.resnet.BasicBlock.
struct BasicBlock : fx::Module<BasicBlock> {
  BasicBlock(int64_t inplanes, int64_t planes, int64_t stride,
             torch::nn::Sequential downsample);
  Value forward(Value x);

  Submodule<torch::nn::Conv2d> conv1, conv2;
  Submodule<torch::nn::BatchNorm2d> bn1, bn2;
  Submodule<torch::nn::ReLU> relu;
  Submodule<torch::nn::Sequential> downsample;
};

// torchvision.models.resnet18(): ResNet(BasicBlock, [2, 2, 2, 2]).
struct ResNet18 : fx::Module<ResNet18> {
  explicit ResNet18(int64_t num_classes = 1000);
  Value forward(Value x);

  Submodule<torch::nn::Conv2d> conv1;
  Submodule<torch::nn::BatchNorm2d> bn1;
  Submodule<torch::nn::ReLU> relu;
  Submodule<torch::nn::MaxPool2d> maxpool;
  Submodule<torch::nn::Sequential> layer1, layer2, layer3, layer4;
  Submodule<torch::nn::AdaptiveAvgPool2d> avgpool;
  Submodule<torch::nn::Linear> fc;

 private:
  torch::nn::Sequential make_layer(int64_t planes, int64_t blocks,
                                   int64_t stride);
  int64_t inplanes_ = 64;
};

// torchvision.models.mobilenetv2.InvertedResidual. Its Sequentials nest, so
// they are fx::Sequential (torch::nn::Sequential cannot hold a Sequential).
struct InvertedResidual : fx::Module<InvertedResidual> {
  InvertedResidual(int64_t inp, int64_t oup, int64_t stride,
                   int64_t expand_ratio);
  Value forward(Value x);

  bool use_res_connect;
  Submodule<fx::Sequential> conv;
};

// torchvision.models.mobilenet_v2().
struct MobileNetV2 : fx::Module<MobileNetV2> {
  explicit MobileNetV2(int64_t num_classes = 1000);
  Value forward(Value x);

  Submodule<fx::Sequential> features;
  Submodule<fx::Sequential> classifier;
};

}  // namespace fx::examples

#endif  // SDK_EXAMPLES_TRACING_TORCHVISION_MODELS_H_
