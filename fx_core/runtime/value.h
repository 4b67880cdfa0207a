// Runtime values: how torch.fx's Python values are held as c10::IValue when a
// graph runs (GraphModule, Interpreter, op kernels).
//
//   Python                    IValue
//   None, bool, int, float    None, Bool, Int, Double
//   str                       String
//   Tensor                    Tensor
//   list / tuple              a typed list (IntList, DoubleList, BoolList,
//                             TensorList) when every element has that type,
//                             else a GenericList / a Tuple
//   torch.Size, x.size()      a Tuple named "torch.Size" (python_tuples.h)
//   torch.return_types.max    a Tuple named "torch.return_types.max" with
//                             its fields (python_tuples.h)
//   dict                      GenericDict (str, int or Any keys)
//   a NamedTuple argument     a Tuple named by its class, with its fields
//                             (python_tuples.h's make_named_tuple)
//   slice(a, b, c)            a capsule holding fx::SliceValue
//   Ellipsis                  a capsule holding fx::EllipsisValue
//   torch.float32 ...         Int (the c10::ScalarType), as TorchScript does
//   torch.device('cpu')       Device
//   torch.contiguous_format   Int (the c10::MemoryFormat)
//   torch.strided             Int (the c10::Layout)
//
// Slices and Ellipsis have no IValue tag of their own; capsules carry them
// without registering a TorchScript class.
#ifndef FX_CORE_RUNTIME_VALUE_H_
#define FX_CORE_RUNTIME_VALUE_H_

#include <ATen/core/ivalue.h>

#include <optional>
#include <string>
#include <string_view>

#include "fx_core/io/python_tuples.h"
#include "fx_core/ir/argument.h"

namespace fx {

// slice(start, stop, step): each an Int, a Tensor or None.
struct SliceValue : c10::intrusive_ptr_target {
  c10::IValue start, stop, step;
};
struct EllipsisValue : c10::intrusive_ptr_target {};

c10::IValue make_slice(c10::IValue start, c10::IValue stop, c10::IValue step);
c10::IValue make_ellipsis();
// The slice an IValue holds, or nullptr.
const SliceValue* as_slice(const c10::IValue& v);
bool is_ellipsis(const c10::IValue& v);

// A list of values as Python would build it, typed when homogeneous.
c10::IValue make_list(std::vector<c10::IValue> items);
c10::IValue make_tuple(std::vector<c10::IValue> items);
// The value of a tuple argument from its items' values: a named tuple of the
// class `type` (a NamedTuple argument's, argument.h) or, for nullptr, a
// plain tuple.
c10::IValue make_tuple_of(const NamedTupleType* type,
                          std::vector<c10::IValue> items);
// The keys of a dict argument as values: its constant keys (dict_keys()),
// else its str keys.
std::vector<c10::IValue> dict_key_values(const Argument& dict);
// A dict of `keys` (one per value): keys typed str or int when all are,
// else Any.
c10::IValue make_dict_of(std::vector<c10::IValue> keys,
                         std::vector<c10::IValue> values);
// How deep lists, tuples and dicts may nest in a value the runtime builds
// from a node's arguments: the depth the graph and torch.save readers allow.
// LibTorch frees nested containers recursively, so a deeper value (built up
// node by node, each level within the readers' limit) would overflow the
// stack when freed.
inline constexpr size_t kMaxValueDepth = 1000;
// Throws FxError when `v` nests containers deeper than kMaxValueDepth. Costs
// one pass over the containers inside `v` (none for a flat list).
void check_value_depth(const c10::IValue& v);
// The elements of any list or tuple IValue.
std::vector<c10::IValue> sequence_elements(const c10::IValue& v);
bool is_sequence(const c10::IValue& v);

// The value of an Argument that references no Node (a constant). Throws
// FxError naming the kind for a Node reference or an unknown torch name.
c10::IValue constant_value(const Argument& arg);
// The constant Argument spelling `v` (None, numbers, strings, devices,
// slices, Ellipsis, lists, tuples and dicts keyed by bool, int, float or
// str of those; a named tuple as a plain tuple):
// constant_value's inverse.
// Throws FxError naming the type of anything else (a tensor).
Argument constant_argument(const c10::IValue& v);

// "torch.float32" -> Float; std::nullopt for an unknown name.
std::optional<c10::ScalarType> parse_dtype(std::string_view name);
// Float -> "torch.float32".
std::string dtype_name(c10::ScalarType type);
std::optional<c10::MemoryFormat> parse_memory_format(std::string_view name);
std::optional<c10::Layout> parse_layout(std::string_view name);
// "torch.per_channel_affine" <-> PerChannelAffine (a config holds a
// qscheme as its int, as TorchScript does).
std::optional<c10::QScheme> parse_qscheme(std::string_view name);
std::string qscheme_name(c10::QScheme scheme);

// The enumerator an int standing for a torch enum names (a dtype, layout,
// memory format or qscheme is an int in an IValue, as TorchScript holds it),
// std::nullopt for none. An int read from a file or put in a graph can be
// any int64, and c10's 8-bit enums are cast unchecked by LibTorch (an int
// naming no dtype crashed its kernels or was taken for another): every int
// reaching LibTorch as an enum goes through these first.
std::optional<c10::ScalarType> dtype_from_int(int64_t value);
std::optional<c10::Layout> layout_from_int(int64_t value);
std::optional<c10::MemoryFormat> memory_format_from_int(int64_t value);
std::optional<c10::QScheme> qscheme_from_int(int64_t value);

// The Python type name of a value, for messages ("Tensor", "int", "tuple").
std::string value_type_name(const c10::IValue& v);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_VALUE_H_
