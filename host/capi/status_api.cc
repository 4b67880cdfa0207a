// The status entries of the C function table (CreateStatus .. ReleaseString)
// and take_status, which reads and releases a status for the host.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <new>
#include <vector>

#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "host/capi/api_internal.h"
#include "host/capi/c_api.h"
#include "host/capi/wrap.h"

namespace fx::host {
namespace internal {

namespace {

// What a handle that names no live status says.
constexpr const char* kNoStatus =
    "not a live status (released already, or not made by this host)";

}  // namespace

void fill_status_entries(FxApi& t) {
  t.CreateStatus = [](FxStatusCode code, const char* message) {
    return make_status(code, message ? message : "");
  };
  // A handle that names no live status reads as an internal error.
  t.GetStatusCode = [](const FxStatus* s) {
    const HostObject<FxStatus>* status = peek_object(s);
    return status ? status->code : s ? FX_INTERNAL : FX_OK;
  };
  t.GetStatusMessage = [](const FxStatus* s) {
    const HostObject<FxStatus>* status = peek_object(s);
    return status ? status->message.c_str() : s ? kNoStatus : "";
  };
  t.ReleaseStatus = [](FxStatus* s) { release_object(s); };
  t.ReleaseString = [](char* text) { std::free(text); };
}

}  // namespace internal

StatusText take_status(FxStatus* status) {
  StatusText text;
  if (status == nullptr) return text;
  const auto* live = internal::peek_object(status);
  if (live == nullptr) return {FX_INTERNAL, internal::kNoStatus};
  text.code = live->code;
  text.message = live->message;
  internal::release_object(status);
  return text;
}

}  // namespace fx::host
