// The composite kernels Python's torch 1.13 registers in place of ATen's C++
// ones (`OpOverload.py_impl(DispatchKey.CompositeImplicitAutograd)`), which
// Python's make_fx runs when such an operator reaches it whole (under
// inference mode, where autograd does not decompose it first). fx::make_fx
// runs these ports instead of the C++ kernel so it records the same calls.
//
// Covered: aten::matmul (torch/_decomp/decompositions.py: views where the
// C++ kernel has _unsafe_view, a clone from .contiguous()).
#ifndef FX_CORE_CAPTURE_PYTHON_KERNELS_H_
#define FX_CORE_CAPTURE_PYTHON_KERNELS_H_

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <functional>
#include <vector>

namespace c10 {
struct FunctionSchema;
}  // namespace c10

namespace fx::capture {

// A kernel: the operator's arguments in schema order, its results out.
using PythonKernel =
    std::function<std::vector<c10::IValue>(const std::vector<c10::IValue>&)>;

// The Python kernel for the operator with this schema, or nullptr.
const PythonKernel* find_python_kernel(const c10::FunctionSchema& schema);

// torch/_decomp/decompositions.py's matmul, call for call.
at::Tensor python_matmul(const at::Tensor& tensor1, const at::Tensor& tensor2);

}  // namespace fx::capture

#endif  // FX_CORE_CAPTURE_PYTHON_KERNELS_H_
