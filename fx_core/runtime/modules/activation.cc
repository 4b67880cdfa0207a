#include "fx_core/runtime/modules/activation.h"

#include <ATen/ATen.h>

namespace fx::nn {

at::Tensor HardswishImpl::forward(const at::Tensor& input) {
  if (inplace_) {
    at::Tensor x = input;
    return at::hardswish_(x);
  }
  return at::hardswish(input);
}

at::Tensor HardsigmoidImpl::forward(const at::Tensor& input) {
  if (inplace_) {
    at::Tensor x = input;
    return at::hardsigmoid_(x);
  }
  return at::hardsigmoid(input);
}

}  // namespace fx::nn
