// What every C entry of the host runs inside: guarded() turns each C++
// exception into an FxStatus for the caller, fail() / require() raise the
// failures an entry reports, make_status() makes the status object (a
// checked handle, wrap.h). Private to the host's implementation of the C ABI
// (host/capi, host/delegate): plugins see only the statuses.
#ifndef HOST_HANDLES_GUARD_H_
#define HOST_HANDLES_GUARD_H_

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include "fx/plugin_api.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "host/handles/wrap.h"

namespace fx::host::internal {

// A new status (a checked handle, wrap.h); NULL only when out of memory.
inline FxStatus* make_status(FxStatusCode code, std::string message) noexcept {
  try {
    auto status = std::make_unique<HostObject<FxStatus>>();
    status->code = code;
    status->message = std::move(message);
    return give_object<FxStatus>(std::move(status));
  } catch (...) {
    return nullptr;
  }
}

// A failure raised inside an entry; becomes the returned status.
struct ApiError {
  FxStatusCode code;
  std::string message;
};

[[noreturn]] inline void fail(FxStatusCode code, std::string message) {
  throw ApiError{code, std::move(message)};
}

template <typename T>
T* require(T* p, const char* what) {
  if (p == nullptr) fail(FX_INVALID_ARGUMENT, cat(what, " must not be NULL"));
  return p;
}

// Runs `body`, turning every exception into a status.
template <typename Fn>
FxStatus* guarded(const char* entry, Fn&& body) {
  try {
    body();
    return nullptr;
  } catch (const ApiError& e) {
    return make_status(e.code, cat(entry, ": ", e.message));
  } catch (const FxError& e) {
    return make_status(FX_FAILED_PRECONDITION, cat(entry, ": ", e.what()));
  } catch (const std::bad_alloc&) {
    return make_status(FX_INTERNAL, cat(entry, ": out of memory"));
  } catch (const std::exception& e) {
    return make_status(FX_INTERNAL, cat(entry, ": ", e.what()));
  } catch (...) {
    return make_status(FX_INTERNAL, cat(entry, ": unknown exception"));
  }
}

// A copy of `text` for the caller, who frees it (ReleaseString, free()).
inline char* c_string(std::string_view text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out == nullptr) throw std::bad_alloc();
  std::memcpy(out, text.data(), text.size());
  out[text.size()] = '\0';
  return out;
}

}  // namespace fx::host::internal

#endif  // HOST_HANDLES_GUARD_H_
