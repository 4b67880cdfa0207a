// The torch_dispatch mode make_fx captures with, without Python: the
// dispatch keys it includes, and the scope that installs a recorder
// (recorder.h) and the mode on this thread. The mode's hooks (a
// PyInterpreter of its own) and the user-call key's fallback are in
// capture_mode.cc.
#ifndef FX_CORE_CAPTURE_CAPTURE_MODE_H_
#define FX_CORE_CAPTURE_CAPTURE_MODE_H_

#include <c10/core/DispatchKey.h>
#include <c10/core/DispatchKeySet.h>
#include <c10/core/SafePyObject.h>

#include <memory>

namespace fx {
namespace capture {

// The keys a torch_dispatch mode needs included: the snapshot key (highest)
// records the thread's dispatch state on entry; the Python key (just above
// the backends, below autograd) is where the mode is called.
const c10::DispatchKeySet kPythonKeys = c10::DispatchKeySet(
    {c10::DispatchKey::Python, c10::DispatchKey::PythonTLSSnapshot});
// Above autograd: sees the calls the user's code makes, before autograd's
// composite kernels decompose them (make_fx's spelling of those calls).
constexpr c10::DispatchKey kUserCallKey =
    c10::DispatchKey::TESTING_ONLY_GenericMode;
const c10::DispatchKeySet kCaptureKeys =
    kPythonKeys | c10::DispatchKeySet(kUserCallKey);

class Recorder;

// Installs the recorder and the mode on this thread; restores both.
class CaptureScope {
 public:
  explicit CaptureScope(Recorder* recorder);
  ~CaptureScope();
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;

 private:
  std::shared_ptr<c10::SafePyObject> mode_;
};

}  // namespace capture
}  // namespace fx

#endif  // FX_CORE_CAPTURE_CAPTURE_MODE_H_
