#include "fx_core/capture/python_kernels.h"

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <cstdint>
#include <vector>

#include "fx_core/support/error.h"

namespace fx::capture {

namespace {

int64_t product(const std::vector<int64_t>& sizes) {
  int64_t p = 1;
  for (int64_t s : sizes) p *= s;
  return p;
}

// decompositions.py's should_fold: a batch folded into one mm.
bool should_fold(const at::Tensor& tensor1, int64_t dim_tensor2) {
  const int64_t dim_tensor1 = tensor1.dim();
  if (dim_tensor1 < 3 || (dim_tensor2 != 1 && dim_tensor2 != 2)) return false;
  auto sizes = tensor1.sizes();
  auto strides = tensor1.strides();
  // The last two dims transposed under a slowest first dim: bmm instead.
  return !(dim_tensor1 == 3 && dim_tensor2 == 2 && strides[2] != 1 &&
           strides[0] == sizes[1] * sizes[2]);
}

at::Tensor folded_matmul(const at::Tensor& tensor1, const at::Tensor& tensor2) {
  const int64_t dim_tensor1 = tensor1.dim(), dim_tensor2 = tensor2.dim();
  const bool transpose = dim_tensor2 > dim_tensor1;
  at::Tensor t1 = transpose ? tensor2.mT() : tensor1;
  at::Tensor t2 = !transpose         ? tensor2
                  : dim_tensor1 == 2 ? tensor1.t()
                                     : tensor1;
  std::vector<int64_t> sizes_1 = t1.sizes().vec();
  std::vector<int64_t> output_shape(sizes_1.begin(), sizes_1.end() - 1);
  const int64_t folded_dim1 = product(output_shape);
  const bool t2_is_matrix = t2.dim() == 2;
  if (t2_is_matrix) output_shape.push_back(t2.size(1));
  t1 = t1.contiguous();
  at::Tensor t1_folded = t1.view({folded_dim1, sizes_1.back()});
  if (t2_is_matrix) {
    at::Tensor output = t1_folded.mm(t2).view(output_shape);
    return transpose ? output.mT().contiguous() : output;
  }
  return t1_folded.mv(t2).view(output_shape);
}

at::Tensor batched_matmul(const at::Tensor& tensor1,
                          const at::Tensor& tensor2) {
  const int64_t dim_tensor1 = tensor1.dim(), dim_tensor2 = tensor2.dim();
  const int64_t n = dim_tensor1 > 1 ? tensor1.size(-2) : 1;
  const int64_t m1 = tensor1.size(-1);
  const int64_t m2 = dim_tensor2 > 1 ? tensor2.size(-2) : tensor2.size(-1);
  const int64_t p = dim_tensor2 > 1 ? tensor2.size(-1) : 1;
  auto batch_tensor1 = tensor1.sizes().slice(
      0, static_cast<size_t>(std::max<int64_t>(dim_tensor1 - 2, 0)));
  auto batch_tensor2 = tensor2.sizes().slice(
      0, static_cast<size_t>(std::max<int64_t>(dim_tensor2 - 2, 0)));
  std::vector<int64_t> batch = at::infer_size(batch_tensor1, batch_tensor2);
  const int64_t batch_product = product(batch);
  auto with = [&](int64_t a, int64_t b) {
    std::vector<int64_t> sizes = batch;
    sizes.push_back(a);
    sizes.push_back(b);
    return sizes;
  };
  at::Tensor tensor1_expanded =
      tensor1.expand(with(n, m1)).contiguous().view({batch_product, n, m1});
  at::Tensor tensor2_expanded =
      tensor2.expand(with(m2, p)).contiguous().view({batch_product, m2, p});
  std::vector<int64_t> output_shape = batch;
  if (dim_tensor1 > 1) output_shape.push_back(n);
  if (dim_tensor2 > 1) output_shape.push_back(p);
  return tensor1_expanded.bmm(tensor2_expanded).view(output_shape);
}

}  // namespace

at::Tensor python_matmul(const at::Tensor& tensor1, const at::Tensor& tensor2) {
  const int64_t dim_tensor1 = tensor1.dim(), dim_tensor2 = tensor2.dim();
  if (dim_tensor1 == 0 || dim_tensor2 == 0) {
    throw FxError("matmul: both arguments need to be at least 1-d");
  }
  if (dim_tensor1 == 1 && dim_tensor2 == 1) return at::dot(tensor1, tensor2);
  if (dim_tensor1 == 2 && dim_tensor2 == 1) return at::mv(tensor1, tensor2);
  if (dim_tensor1 == 1 && dim_tensor2 == 2) {
    return at::squeeze(at::mm(at::unsqueeze(tensor1, 0), tensor2), 0);
  }
  if (dim_tensor1 == 2 && dim_tensor2 == 2) return at::mm(tensor1, tensor2);
  if (should_fold(tensor1, dim_tensor2) || should_fold(tensor2, dim_tensor1)) {
    return folded_matmul(tensor1, tensor2);
  }
  return batched_matmul(tensor1, tensor2);
}

const PythonKernel* find_python_kernel(const c10::FunctionSchema& schema) {
  static const c10::FunctionSchema* matmul =
      &c10::Dispatcher::singleton()
           .findSchemaOrThrow("aten::matmul", "")
           .schema();
  static const PythonKernel* matmul_kernel = new PythonKernel(
      [](const std::vector<c10::IValue>& args) -> std::vector<c10::IValue> {
        return {python_matmul(args.at(0).toTensor(), args.at(1).toTensor())};
      });
  return &schema == matmul ? matmul_kernel : nullptr;
}

}  // namespace fx::capture
