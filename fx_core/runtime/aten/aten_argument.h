// fx::AtenParam: one argument of an ATen schema as Python's argument parser
// sees it (torch/csrc/utils/python_arg_parser.cpp): which runtime values it
// accepts, and how an accepted value becomes what the boxed kernel expects.
//
//   schema type            accepts (as Python does)
//   Tensor                 a Tensor; a number only in the permissive pass
//   Scalar                 bool, int, float; a 0-dim Tensor
//   int, SymInt            int (not bool); a 0-dim integral Tensor
//   float                  float, int; a 0-dim Tensor
//   bool                   bool; a 0-dim bool Tensor
//   int[N], SymInt[]       a list/tuple of ints; a single int when N > 0
//                          (repeated N times)
//   float[], bool[N]       a list/tuple of those
//   Tensor[], Tensor?[]    a list/tuple of Tensors (and None for Tensor?[])
//   str, Dimname           str;  Dimname[]: a list/tuple of str
//   ScalarType, Layout,    the Int runtime values torch.float32,
//   MemoryFormat           torch.strided, torch.contiguous_format hold
//   Device                 a Device, a str ("cpu"), an int
//   Generator              None only
//   T?                     also None
// Any other type (TorchScript-only overloads: t[], Any, Dict, ...) makes the
// whole overload unusable from a graph (AtenType::kUnsupported).
#ifndef FX_CORE_RUNTIME_ATEN_ATEN_ARGUMENT_H_
#define FX_CORE_RUNTIME_ATEN_ATEN_ARGUMENT_H_

#include <ATen/core/ivalue.h>

#include <cstdint>
#include <optional>
#include <string>

namespace c10 {
struct Argument;
}  // namespace c10

namespace fx {

enum class AtenType : uint8_t {
  kTensor,
  kScalar,
  kInt,
  kFloat,
  kBool,
  kString,
  kIntList,
  kFloatList,
  kScalarList,  // Scalar[]: numbers
  kBoolList,
  kTensorList,
  kOptionalTensorList,
  kStringList,
  kScalarType,
  kLayout,
  kMemoryFormat,
  kDevice,
  kGenerator,
  kUnsupported,
};

struct AtenParam {
  std::string name;      // Python's name: `input` for a function's `self`
  std::string type_str;  // the schema's spelling: "int[1]?", "Tensor"
  AtenType type = AtenType::kUnsupported;
  bool optional = false;  // T?: None accepted
  int size = 0;           // int[2] -> 2; 0 when unsized
  bool keyword_only = false;
  std::optional<c10::IValue> default_value;
};

// The parameter for schema argument `arg`; `python_name` is the name a call
// uses for it.
AtenParam make_aten_param(const c10::Argument& arg, std::string python_name);

// Python's check: whether `value` is accepted for `param`. With
// `numbers_as_tensors`, a number is accepted for a Tensor (Python allows it
// for its arithmetic functions).
bool aten_accepts(const AtenParam& param, const c10::IValue& value,
                  bool numbers_as_tensors);

// `value` (accepted) as the boxed kernel expects it: typed lists, doubles
// for floats, numbers unpacked from 0-dim tensors, wrapped-number tensors.
c10::IValue aten_convert(const AtenParam& param, c10::IValue value);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_ATEN_ATEN_ARGUMENT_H_
