// The GIL released around SDK work that may run LibTorch kernels.
//
// In a Python process some of LibTorch's kernels are written in Python
// (torch's meta registrations and decompositions). When one raises, its
// Python error travels up as a C++ exception and Python's error indicator
// stays set. SDK code that handles such an exception (a graph that cannot run
// on meta tensors is "not checked", not an error) then returns normally with
// the indicator still set, which Python reports as a SystemError ("returned
// a result with an exception set"). ReleasedGil clears the indicator once the
// GIL is back: an exception the SDK handled is not the caller's. One the SDK
// did not handle still propagates as a C++ exception and reaches Python
// through pybind11's translation.
#ifndef PYTHON_RELEASED_GIL_H_
#define PYTHON_RELEASED_GIL_H_

#include <pybind11/pybind11.h>

#include <optional>

namespace fx_sdk {

class ReleasedGil {
 public:
  ReleasedGil() : released_(std::in_place) {}
  ~ReleasedGil() {
    released_.reset();  // takes the GIL back
    if (PyErr_Occurred() != nullptr) PyErr_Clear();
  }
  ReleasedGil(const ReleasedGil&) = delete;
  ReleasedGil& operator=(const ReleasedGil&) = delete;

 private:
  std::optional<pybind11::gil_scoped_release> released_;
};

}  // namespace fx_sdk

#endif  // PYTHON_RELEASED_GIL_H_
