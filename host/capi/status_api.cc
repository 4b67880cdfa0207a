// The status entries of the C function table (CreateStatus .. ReleaseString).
// The host reads and releases a status with take_status
// (host/handles/status.h).
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
#include "host/handles/status.h"
#include "host/handles/wrap.h"

namespace fx::host::internal {

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

}  // namespace fx::host::internal
