// Python's text forms of fx::Argument values, as torch.fx prints them.
//
// Three spellings appear in torch.fx's output and each is reproduced here
// byte for byte:
//  - repr(): what generated code holds (`'a'`, `1e-05`, `(x, 3)`,
//    `device(type='cpu')`, a NamedTuple `Pair(x=a, y=1.2)`, `{0: x}`); a
//    Node is its name.
//  - str(): Python's str(), used for output nodes and placeholder defaults in
//    the graph text (a top-level string is unquoted, a device is `cpu`).
//  - format_arg(): torch.fx's `_format_arg` for args and kwargs in the graph
//    text (`(%x, 3)`, `{dim: -1}`: nodes as `%name`, strings and keys bare;
//    a NamedTuple as a tuple, or `Pair(x=%x, y=3)` when its class's
//    _custom_fx_repr_fn prints it so).
#ifndef FX_CORE_IR_PYTHON_REPR_H_
#define FX_CORE_IR_PYTHON_REPR_H_

#include <string>
#include <string_view>

#include "fx_core/ir/argument.h"

namespace fx {

// Python's repr(float): shortest round-trip digits, `inf`, `-inf`, `nan`,
// scientific form below 1e-4 and from 1e16 (`1e-05`, `1e+16`, `100.0`).
std::string python_float_repr(double value);

// Python's repr(str): single quotes unless the text holds ' and no ",
// with Python's escapes for backslash, quotes and non-printable characters.
std::string python_string_repr(std::string_view text);

// True when `text` is a Python identifier (ASCII rules; str.isidentifier()).
bool is_python_identifier(std::string_view text);

// A type annotation is held as torch.fx's generated code spells it
// ("torch.Tensor", "typing_Tuple[int,int]", "typing_Union[int,NoneType]"; a
// bare "List[int]" is accepted too); the graph text prints the typing object's
// repr ("typing.Tuple[int, int]", "typing.Optional[int]").
std::string type_text_form(std::string_view code_form);

std::string repr(const Argument& arg);
std::string str(const Argument& arg);
std::string format_arg(const Argument& arg);

// Appending forms, for building long strings without temporaries.
void append_repr(std::string& out, const Argument& arg);
// repr() of a tuple's items as a plain tuple (`(a, 1.2)`, `(a,)`), what
// torch.fx's code writes after a NamedTuple's class (`repr(tuple(arg))`).
void append_tuple_repr(std::string& out, const Argument& arg);
void append_format_arg(std::string& out, const Argument& arg);

}  // namespace fx

#endif  // FX_CORE_IR_PYTHON_REPR_H_
