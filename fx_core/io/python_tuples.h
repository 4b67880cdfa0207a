// Python's tuple subclasses that torch returns, held as c10 named tuples so
// that running a graph and reading or writing a torch.save file keep them:
//
//   Python                              IValue
//   torch.Size([2, 3]), x.shape         Tuple(2, 3), type named "torch.Size"
//   torch.return_types.max(values=..,   Tuple(v, i), type named
//     indices=..)                         "torch.return_types.max" with the
//                                         fields of the ATen schema's returns
//   torch.nn.modules.adaptive           Tuple(output, loss), type named so
//     ._ASMoutput(output, loss)
//
// Both behave as tuples everywhere a tuple is accepted (indexing, unpacking,
// int[] arguments); the name is what makes `torch.load` give back the same
// Python type and what `getattr(result, "values")` reads.
//
// Threads: every function is safe from any thread; types are created once
// per name (per rank for torch.Size) and cached for the process's life.
#ifndef FX_CORE_IO_PYTHON_TUPLES_H_
#define FX_CORE_IO_PYTHON_TUPLES_H_

#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>

#include <optional>
#include <string>
#include <vector>

namespace fx {

inline constexpr char kTorchSizeName[] = "torch.Size";
inline constexpr char kReturnTypesPrefix[] = "torch.return_types.";
// nn.AdaptiveLogSoftmaxWithLoss's result, a collections.namedtuple.
inline constexpr char kAsmOutputName[] = "torch.nn.modules.adaptive._ASMoutput";

// torch.Size(dims).
c10::IValue make_torch_size(c10::IntArrayRef dims);
// torch.Size of ints held as IValues (each must be an Int).
c10::IValue make_torch_size(std::vector<c10::IValue> dims);
bool is_torch_size(const c10::IValue& v);

// The named tuple type torch.return_types.NAME: the names and types of an
// ATen schema's returns (`max.dim -> (Tensor values, Tensor indices)`).
c10::TupleTypePtr return_type(const std::string& name,
                              const std::vector<c10::Argument>& returns);
// torch.return_types.NAME as Python has it: from the returns of ATen's
// `aten::NAME` schemas (NAME_out: the out= overload's), or nullptr when no
// schema of that name has `count` returns, all named.
c10::TupleTypePtr find_return_type(const std::string& name, size_t count);
// torch.return_types.NAME(elements), typed by find_return_type; fields
// "field0", ... (Tensor-typed) when ATen has no such schema.
c10::IValue make_return_type(const std::string& name,
                             std::vector<c10::IValue> elements);

// _ASMoutput(output, loss).
c10::IValue make_asm_output(const at::Tensor& output, const at::Tensor& loss);

// An instance of the user's namedtuple class `qualified_name` (its module
// and qualified name, "__main__.Point") with `fields`, holding `elements`
// (one per field; throws FxError otherwise).
c10::IValue make_named_tuple(const std::string& qualified_name,
                             const std::vector<std::string>& fields,
                             std::vector<c10::IValue> elements);

// "torch.Size", "torch.return_types.max", or "" for a plain tuple and any
// value that is not a tuple.
std::string python_tuple_name(const c10::IValue& v);
// The element a named tuple's field holds, or std::nullopt when `v` is not a
// named tuple or has no such field.
std::optional<c10::IValue> named_tuple_field(const c10::IValue& v,
                                             const std::string& field);
// A tuple of `items` with the same Python type as the tuple `like` (named or
// not): for functions that map a tuple's elements.
c10::IValue tuple_like(const c10::IValue& like, std::vector<c10::IValue> items);
// A tuple of `items` of the same Python type as `like` for Python's sequence
// operations (a torch.Size stays one; a return_types value does not: its
// slices and sums are tuples).
c10::IValue same_tuple_type(const c10::IValue& like,
                            std::vector<c10::IValue> items);

}  // namespace fx

#endif  // FX_CORE_IO_PYTHON_TUPLES_H_
