// Values across fx_sdk._C's boundary, for every part of the module
// (bindings.h): Python objects to the runtime's IValues and back, an
// argument's scalar as Python's, symbolic ints as torch's SymInts, and the
// SDK's errors as Python's. Below the parts: it calls none of them (a
// Python object the runtime holds as it is: held_objects.h).
#ifndef PYTHON_PYTHON_VALUES_H_
#define PYTHON_PYTHON_VALUES_H_

#include <ATen/core/ivalue.h>
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace fx {
class Argument;
}  // namespace fx

namespace fx_sdk {

// Raises ValueError with the status's message.
[[noreturn]] void raise_value_error(const absl::Status& status);

// Python values (call arguments, a list) as the IValues GraphModule::forward
// takes (tensors shared, not copied).
std::vector<c10::IValue> to_ivalues(const pybind11::handle& sequence);

// A run's result as Python's own types: torch.Size, torch.return_types.*
// and the other named tuples of fx_core/io/python_tuples.h become those
// classes (not TorchScript's ad-hoc namedtuples); containers recursively.
pybind11::object to_python(c10::IValue value);

// An argument that is a scalar (None, bool, int, float, str) as the Python
// object it stands for; a null object for any other kind.
pybind11::object scalar_to_python(const fx::Argument& arg);

// torch 1.13's SymInt for a symbolic int's expression (argument.h's
// kSymInt), built by fx_sdk.torchfx_import.symint (sympy, never eval).
pybind11::object symint(const std::string& expression);

}  // namespace fx_sdk

#endif  // PYTHON_PYTHON_VALUES_H_
