#include "fx_core/runtime/plan/gemv_linear.h"

#include <ATen/ATen.h>

#include <utility>

#include "fx_core/runtime/plan/huge_pages.h"

namespace fx {
namespace {

bool known_activation(const std::string& a) {
  for (const char* name : {"none", "relu", "hardtanh", "hardswish", "silu",
                           "sigmoid", "hardsigmoid", "gelu", "gelu_tanh"}) {
    if (a == name) return true;
  }
  return false;
}

}  // namespace

std::unique_ptr<GemvLinear> GemvLinear::create(
    const at::Tensor& weight, const at::Tensor& bias,
    const FusedLinearParams& params, std::vector<int64_t> input_sizes) {
  if (input_sizes.empty() || !weight.defined() || weight.dim() != 2 ||
      weight.scalar_type() != at::kFloat || !weight.device().is_cpu() ||
      weight.layout() != at::kStrided || weight.size(1) != input_sizes.back() ||
      weight.size(0) == 0 || weight.size(1) == 0 ||
      !known_activation(params.activation)) {
    return nullptr;
  }
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < input_sizes.size(); ++i) rows *= input_sizes[i];
  if (rows != 1) return nullptr;
  if (bias.defined() &&
      (bias.dim() != 1 || bias.size(0) != weight.size(0) ||
       bias.scalar_type() != at::kFloat || !bias.device().is_cpu())) {
    return nullptr;
  }
  std::unique_ptr<GemvLinear> g(new GemvLinear());
  // A copy on huge pages (huge_pages.h): read whole on every run.
  g->weight_ = empty_on_huge_pages(
      weight.sizes().vec(), weight.contiguous().strides().vec(), at::kFloat);
  g->weight_.copy_(weight);
  g->bias_ = bias.defined() ? bias.contiguous() : bias;
  g->params_ = params;
  g->output_sizes_ = input_sizes;
  g->output_sizes_.back() = weight.size(0);
  g->input_sizes_ = std::move(input_sizes);
  return g;
}

void GemvLinear::run(const at::Tensor& input, const at::Tensor* residual,
                     const at::Tensor& out) {
  at::Tensor x = input.reshape({weight_.size(1)});
  at::Tensor y = out.view({weight_.size(0)});
  if (bias_.defined()) {
    at::addmv_out(y, bias_, weight_, x);
  } else {
    at::mv_out(y, weight_, x);
  }
  if (params_.has_residual) y.add_(residual->reshape({weight_.size(0)}));
  activate(y);
}

void GemvLinear::activate(at::Tensor& y) const {
  const std::string& a = params_.activation;
  if (a == "relu") {
    at::relu_(y);
  } else if (a == "hardtanh") {
    at::hardtanh_(y, params_.min_val, params_.max_val);
  } else if (a == "hardswish") {
    at::hardswish_(y);
  } else if (a == "silu") {
    at::silu_(y);
  } else if (a == "sigmoid") {
    at::sigmoid_(y);
  } else if (a == "hardsigmoid") {
    at::hardsigmoid_(y);
  } else if (a == "gelu") {
    at::gelu_(y, "none");
  } else if (a == "gelu_tanh") {
    at::gelu_(y, "tanh");
  }
}

}  // namespace fx
