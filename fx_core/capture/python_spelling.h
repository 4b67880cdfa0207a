// How Python's bindings spell an ATen call that C++ code makes, which
// make_fx's nodes follow (recorder.h): the overload Python's argument
// parser picks for a C++-only one, TensorOptions as Python passes them,
// `int[N]` given as one int, and the names of layouts and memory formats.
#ifndef FX_CORE_CAPTURE_PYTHON_SPELLING_H_
#define FX_CORE_CAPTURE_PYTHON_SPELLING_H_

#include <ATen/core/function_schema.h>
#include <ATen/core/stack.h>
#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>

#include <cstddef>
#include <string>
#include <vector>

namespace fx {
namespace capture {

std::string layout_name(c10::Layout layout);

std::string memory_format_name(c10::MemoryFormat format);

// True when the schema argument's type (or its Optional's element) is `kind`.
bool has_kind(const c10::Argument& arg, c10::TypeKind kind);

// A factory's TensorOptions as Python's bindings pass them: `device`
// (the default device, CPU) and `pin_memory` (False) always; for a
// `*_like` factory also `dtype` and `layout`, and `device` from `self`.
// C++ leaves them None. The values are the kernel's own defaults, so the
// call computes the same.
void fill_tensor_options(const c10::FunctionSchema& schema,
                         torch::jit::Stack* stack, size_t base);

// For a C++-only overload, the schema Python's parser would have picked
// and where each of its arguments is in `schema`'s; else `&schema`.
const c10::FunctionSchema* python_spelling(const c10::FunctionSchema& schema,
                                           std::vector<size_t>* index);

void expand_int_list(c10::IValue& value, const c10::Argument& param);

}  // namespace capture
}  // namespace fx

#endif  // FX_CORE_CAPTURE_PYTHON_SPELLING_H_
