// Modules that Python's torch.nn has and LibTorch's C++ frontend lacks, so
// that a C++ model (and a graph file naming torch.nn.Hardswish) can use them.
#ifndef FX_CORE_RUNTIME_MODULES_ACTIVATION_H_
#define FX_CORE_RUNTIME_MODULES_ACTIVATION_H_

#include <torch/nn/cloneable.h>
#include <torch/nn/pimpl.h>

namespace fx::nn {

// torch.nn.Hardswish: x * relu6(x + 3) / 6.
class HardswishImpl : public torch::nn::Cloneable<HardswishImpl> {
 public:
  explicit HardswishImpl(bool inplace = false) : inplace_(inplace) {}
  void reset() override {}
  at::Tensor forward(const at::Tensor& input);
  bool inplace() const { return inplace_; }

 private:
  bool inplace_;
};
TORCH_MODULE(Hardswish);

// torch.nn.Hardsigmoid: relu6(x + 3) / 6.
class HardsigmoidImpl : public torch::nn::Cloneable<HardsigmoidImpl> {
 public:
  explicit HardsigmoidImpl(bool inplace = false) : inplace_(inplace) {}
  void reset() override {}
  at::Tensor forward(const at::Tensor& input);
  bool inplace() const { return inplace_; }

 private:
  bool inplace_;
};
TORCH_MODULE(Hardsigmoid);

}  // namespace fx::nn

#endif  // FX_CORE_RUNTIME_MODULES_ACTIVATION_H_
