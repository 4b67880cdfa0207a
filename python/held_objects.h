// Python objects the runtime holds as they are: a handle (a reference the
// runtime may drop from any thread) and, as a value, a capsule holding one.
// The lowest piece of fx_sdk._C: it knows Python and c10, nothing of the
// SDK's graphs. python_values.h turns such values into Python objects and
// back; python_callables.cc keeps the objects a graph calls this way.
#ifndef PYTHON_HELD_OBJECTS_H_
#define PYTHON_HELD_OBJECTS_H_

#include <ATen/core/ivalue.h>
#include <pybind11/pybind11.h>

#include <memory>

namespace fx_sdk {

// A Python object as an opaque handle: a new reference, dropped with the
// GIL taken (leaked while Python finalises).
std::shared_ptr<void> python_handle(pybind11::handle object);
// The object behind a python_handle.
const pybind11::object& object_of(void* handle);

// The object behind `handle` as a runtime value, held as it is.
c10::IValue held_value(std::shared_ptr<void> handle);
// A Python object the runtime has no form for (a user's class given as an
// input), held as it is for the Python callables and methods that use it.
c10::IValue python_object_value(pybind11::handle object);
// Whether `value` is a Python object held as it is.
bool is_python_object(const c10::IValue& value);
// The object a held value holds, or a null object for any other value.
pybind11::object held_python_object(const c10::IValue& value);

}  // namespace fx_sdk

#endif  // PYTHON_HELD_OBJECTS_H_
