#include "fx_core/compile/pointwise_kernel.h"

#include <ATen/TensorIterator.h>

#include <utility>

#include "fx_core/compile/pointwise_loop.h"
#include "fx_core/support/error.h"

namespace fx {

std::unique_ptr<PointwiseKernel> PointwiseKernel::create(
    const std::vector<std::string>& program, std::vector<double> scalars,
    size_t num_inputs) {
  if (!pointwise_loop_supported()) return nullptr;
  try {
    return std::unique_ptr<PointwiseKernel>(new PointwiseKernel(
        parse_pointwise_program(program, std::move(scalars), num_inputs)));
  } catch (const FxError&) {
    return nullptr;  // the reference kernel reports it when the node runs
  }
}

at::TensorIterator PointwiseKernel::make_iterator(
    const at::Tensor& out, const std::vector<at::Tensor>& inputs) const {
  TORCH_CHECK(inputs.size() == program_.num_inputs,
              "fx_inference.pointwise: expected ", program_.num_inputs,
              " inputs, got ", inputs.size());
  at::TensorIteratorConfig config;
  config.set_check_mem_overlap(true)
      .check_all_same_dtype(true)
      .resize_outputs(false)
      .add_output(out);
  for (const at::Tensor& t : inputs) config.add_input(t);
  at::TensorIterator it = config.build();
  TORCH_CHECK(it.dtype(0) == at::kFloat && it.device(0).is_cpu(),
              "fx_inference.pointwise: the fused kernel takes float32 CPU "
              "tensors");
  return it;
}

void PointwiseKernel::run(at::TensorIteratorBase& it) const {
  const PointwiseProgram& p = program_;
  it.for_each(
      [&p](char** data, const int64_t* strides, int64_t size0, int64_t size1) {
        pointwise_loop(p, data, strides, size0, size1);
      });
}

}  // namespace fx
