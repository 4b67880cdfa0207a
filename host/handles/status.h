// Reading the FxStatus objects the host's entries and plugins' functions
// return (make_status, guard.h, makes them).
#ifndef HOST_HANDLES_STATUS_H_
#define HOST_HANDLES_STATUS_H_

#include <string>

#include "fx/plugin_api.h"

namespace fx::host {

// What a status says.
struct StatusText {
  FxStatusCode code = FX_OK;
  std::string message;
};

// Reads and frees a status (a checked handle, wrap.h) that an entry or a
// plugin's function returned: NULL reads as FX_OK; a handle that names no
// live status (released already, or not made by this host) as FX_INTERNAL,
// saying so, and nothing is freed.
StatusText take_status(FxStatus* status);

namespace internal {

// What a handle that names no live status says.
inline constexpr const char* kNoStatus =
    "not a live status (released already, or not made by this host)";

}  // namespace internal
}  // namespace fx::host

#endif  // HOST_HANDLES_STATUS_H_
