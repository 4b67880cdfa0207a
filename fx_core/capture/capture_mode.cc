// make_fx's torch_dispatch mode (capture_mode.h): the hooks LibTorch's
// Python-key fallback calls, handing each call to this thread's recorder;
// the user-call key's fallback, which notes the calls the captured code
// makes itself; the scope installing both.
#include "fx_core/capture/capture_mode.h"

#include <ATen/Functions.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/SafePyObject.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/core/impl/PyInterpreter.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>
#include <torch/library.h>

#include <cstdint>
#include <string>

#include "fx_core/capture/recorder.h"
#include "fx_core/support/error.h"

namespace fx {
namespace capture {
namespace {

using c10::DispatchKey;
using c10::DispatchKeySet;
using c10::TensorImpl;

thread_local Recorder* tls_recorder = nullptr;

// The torch_dispatch hooks LibTorch's Python-key fallback and
// TensorImpl::shallow_copy_and_detach call; no Python object is involved.
class CaptureVTable final : public c10::impl::PyInterpreterVTable {
 public:
  std::string name() const override { return "fx::make_fx"; }
  void decref(PyObject*, bool) const override {}
  c10::intrusive_ptr<TensorImpl> detach(const TensorImpl* self) const override {
    if (tls_recorder != nullptr) return tls_recorder->detach(self);
    // Another thread that inherited the mode: not recorded.
    at::Tensor tensor(
        c10::intrusive_ptr<TensorImpl>::unsafe_reclaim_from_nonowning(
            const_cast<TensorImpl*>(self)));
    c10::impl::ExcludeDispatchKeyGuard below(kCaptureKeys);
    return at::_ops::detach::call(tensor).getIntrusivePtr();
  }
  void dispatch(const c10::OperatorHandle& op,
                torch::jit::Stack* stack) const override {
    if (tls_recorder != nullptr) {
      tls_recorder->dispatch(op, stack);
    } else {
      Recorder::run_below_mode(op, stack);
    }
  }
  void python_dispatcher(const c10::OperatorHandle& op, DispatchKeySet,
                         torch::jit::Stack*) const override {
    unsupported(op.schema().name().c_str());
  }
  // Only called for tensors with Python-defined metadata; make_fx makes none.
  bool is_contiguous(const TensorImpl*, at::MemoryFormat) const override {
    unsupported("is_contiguous");
  }
  bool is_strides_like(const TensorImpl*, at::MemoryFormat) const override {
    unsupported("is_strides_like");
  }
  bool is_non_overlapping_and_dense(const TensorImpl*) const override {
    unsupported("is_non_overlapping_and_dense");
  }
  c10::Device device(const TensorImpl*) const override {
    unsupported("device");
  }
  int64_t dim(const TensorImpl*) const override { unsupported("dim"); }
  c10::IntArrayRef strides(const TensorImpl*) const override {
    unsupported("strides");
  }
  c10::IntArrayRef sizes(const TensorImpl*) const override {
    unsupported("sizes");
  }
  c10::SymIntArrayRef sym_sizes(const TensorImpl*) const override {
    unsupported("sym_sizes");
  }
  c10::Layout layout(const TensorImpl*) const override {
    unsupported("layout");
  }
  c10::SymInt sym_numel(const TensorImpl*) const override {
    unsupported("sym_numel");
  }
  c10::SymIntArrayRef sym_strides(const TensorImpl*) const override {
    unsupported("sym_strides");
  }
  c10::SymInt sym_storage_offset(const TensorImpl*) const override {
    unsupported("sym_storage_offset");
  }
  void trace_gpu_event_creation(uintptr_t) const override {}
  void trace_gpu_event_deletion(uintptr_t) const override {}
  void trace_gpu_event_record(uintptr_t, uintptr_t) const override {}
  void trace_gpu_event_wait(uintptr_t, uintptr_t) const override {}
  void trace_gpu_memory_allocation(uintptr_t) const override {}
  void trace_gpu_memory_deallocation(uintptr_t) const override {}
  void trace_gpu_stream_creation(uintptr_t) const override {}
  void trace_gpu_device_synchronization() const override {}
  void trace_gpu_stream_synchronization(uintptr_t) const override {}
  void trace_gpu_event_synchronization(uintptr_t) const override {}

 private:
  [[noreturn]] static void unsupported(const char* what) {
    throw FxError(std::string("make_fx: unsupported dispatch hook ") + what);
  }
};

// The user-call key's fallback: notes the call, then goes on below the key.
void user_call_fallback(const c10::OperatorHandle& op, DispatchKeySet keys,
                        torch::jit::Stack* stack) {
  const DispatchKeySet below =
      keys & DispatchKeySet(DispatchKeySet::FULL_AFTER, kUserCallKey);
  Recorder* recorder = tls_recorder;
  if (recorder == nullptr) {
    op.redispatchBoxed(below, stack);
    return;
  }
  if (recorder->is_leaf(&op.schema())) {
    recorder->record(op, stack, /*spell_as_python=*/false);
    return;
  }
  if (recorder->at_user_level() && recorder->front_end_call(op, stack)) {
    return;
  }
  recorder->run_user_call(op, below, stack);
}

c10::impl::PyInterpreter* capture_interpreter() {
  // Leaked, as LibTorch expects interpreters to outlive every tensor.
  static auto* interpreter =
      new c10::impl::PyInterpreter(new CaptureVTable());  // NOLINT
  return interpreter;
}

}  // namespace

CaptureScope::CaptureScope(Recorder* recorder) {
  if (tls_recorder != nullptr) {
    throw FxError("make_fx: a capture is already running on this thread");
  }
  if (c10::impl::TorchDispatchModeTLS::get_mode()) {
    throw FxError("make_fx: a torch_dispatch mode is already active");
  }
  static char token;  // the mode's "PyObject": never dereferenced
  mode_ = std::make_shared<c10::SafePyObject>(
      reinterpret_cast<PyObject*>(&token), capture_interpreter());
  c10::impl::TorchDispatchModeTLS::swap_mode(mode_);
  tls_recorder = recorder;
}

CaptureScope::~CaptureScope() {
  tls_recorder = nullptr;
  c10::impl::TorchDispatchModeTLS::swap_mode(mode_);
}

// One fallback per key per process: no other library may register one on
// TESTING_ONLY_GenericMode alongside fx::make_fx.
TORCH_LIBRARY_IMPL(_, TESTING_ONLY_GenericMode, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&user_call_fallback>());
}

}  // namespace capture
}  // namespace fx
