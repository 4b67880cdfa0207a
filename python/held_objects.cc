#include "python/held_objects.h"

#include <Python.h>

#include <utility>

namespace py = pybind11;

namespace fx_sdk {
namespace {

// Any other Python object a callable returns, held as it is so that it can
// reach another Python callable (or the graph's output) unchanged.
struct PythonObjectCapsule : torch::CustomClassHolder {
  explicit PythonObjectCapsule(std::shared_ptr<void> h)
      : handle(std::move(h)) {}
  std::shared_ptr<void> handle;
};

const PythonObjectCapsule* capsule_of(const c10::IValue& value) {
  if (!value.isCapsule()) return nullptr;
  return dynamic_cast<PythonObjectCapsule*>(value.toCapsule().get());
}

}  // namespace

std::shared_ptr<void> python_handle(py::handle object) {
  auto* held = new py::object(py::reinterpret_borrow<py::object>(object));
  return std::shared_ptr<void>(held, [](void* p) {
    auto* o = static_cast<py::object*>(p);
    if (!Py_IsInitialized() || _Py_IsFinalizing()) {
      o->release();  // leaked: Python is going away
      delete o;
      return;
    }
    py::gil_scoped_acquire gil;
    delete o;
  });
}

const py::object& object_of(void* handle) {
  return *static_cast<const py::object*>(handle);
}

c10::IValue held_value(std::shared_ptr<void> handle) {
  return c10::IValue::make_capsule(
      c10::make_intrusive<PythonObjectCapsule>(std::move(handle)));
}

c10::IValue python_object_value(py::handle object) {
  return held_value(python_handle(object));
}

bool is_python_object(const c10::IValue& value) {
  return capsule_of(value) != nullptr;
}

py::object held_python_object(const c10::IValue& value) {
  const PythonObjectCapsule* held = capsule_of(value);
  if (held == nullptr) return py::object();
  return object_of(held->handle.get());
}

}  // namespace fx_sdk
