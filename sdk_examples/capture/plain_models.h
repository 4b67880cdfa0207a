// Models written in plain LibTorch (torch::nn modules and at:: calls, no
// fx::Value): ports of torchvision's resnet18 and mobilenet_v2, and a small
// causal transformer, each with the parameter and buffer names of its Python
// twin (torchvision's models; SmallTransformer in capture_twins.py), so a
// state dict saved in Python loads by name.
#ifndef SDK_EXAMPLES_CAPTURE_PLAIN_MODELS_H_
#define SDK_EXAMPLES_CAPTURE_PLAIN_MODELS_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/modules/pooling.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

namespace fx::examples {

// torchvision.models.resnet18's BasicBlock.
struct PlainBasicBlockImpl : torch::nn::Module {
  PlainBasicBlockImpl(int64_t in, int64_t out, int64_t stride);
  at::Tensor forward(const at::Tensor& x);
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  torch::nn::Sequential downsample{nullptr};
};
TORCH_MODULE(PlainBasicBlock);

// torchvision.models.resnet18() (1000 classes).
struct PlainResNet18Impl : torch::nn::Module {
  PlainResNet18Impl();
  at::Tensor forward(const at::Tensor& input);
  torch::nn::Conv2d conv1{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr};
  torch::nn::MaxPool2d maxpool{nullptr};
  torch::nn::Sequential layers[4];
  torch::nn::AdaptiveAvgPool2d avgpool{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(PlainResNet18);

// torchvision's InvertedResidual: `conv` is the Sequential torchvision
// builds (expansion, depthwise, projection, batch norm).
struct PlainInvertedResidualImpl : torch::nn::Module {
  PlainInvertedResidualImpl(int64_t in, int64_t out, int64_t stride,
                            int64_t expand_ratio);
  at::Tensor forward(const at::Tensor& x);
  bool use_res_connect;
  torch::nn::Sequential conv{nullptr};
};
TORCH_MODULE(PlainInvertedResidual);

// torchvision.models.mobilenet_v2() (1000 classes, width 1.0).
struct PlainMobileNetV2Impl : torch::nn::Module {
  PlainMobileNetV2Impl();
  at::Tensor forward(const at::Tensor& x);
  torch::nn::Sequential features{nullptr}, classifier{nullptr};
};
TORCH_MODULE(PlainMobileNetV2);

// A pre-norm transformer block: causal multi-head self-attention and a GELU
// feed-forward, each added back to its input.
struct PlainBlockImpl : torch::nn::Module {
  PlainBlockImpl(int64_t dim, int64_t heads, int64_t hidden, int64_t max_len);
  at::Tensor forward(const at::Tensor& x);
  int64_t heads;
  torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
  torch::nn::Linear qkv{nullptr}, proj{nullptr}, fc1{nullptr}, fc2{nullptr};
  at::Tensor mask;  // buffer: true above the diagonal
};
TORCH_MODULE(PlainBlock);

// Token ids [batch, time] in, logits [batch, time, vocab] out.
struct SmallTransformerImpl : torch::nn::Module {
  explicit SmallTransformerImpl(int64_t vocab = 64, int64_t dim = 32,
                                int64_t heads = 4, int64_t hidden = 64,
                                int64_t layers = 2, int64_t max_len = 16);
  at::Tensor forward(const at::Tensor& ids);
  torch::nn::Embedding embed{nullptr};
  at::Tensor pos;  // parameter [max_len, dim]
  torch::nn::ModuleList blocks{nullptr};
  torch::nn::LayerNorm norm{nullptr};
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(SmallTransformer);

}  // namespace fx::examples

#endif  // SDK_EXAMPLES_CAPTURE_PLAIN_MODELS_H_
