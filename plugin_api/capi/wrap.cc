#include "plugin_api/capi/wrap.h"

#include "plugin_api/capi/api_internal.h"

namespace fx::host::internal {

void fail_handle(HandleState state, HandleKind kind) {
  const char* name = kind == HandleKind::kGraph ? "graph" : "node";
  if (state == HandleState::kStale) {
    fail(FX_FAILED_PRECONDITION,
         cat("the ", name, " handle is stale: its ", name,
             " no longer exists (its graph was rolled back after a failed "
             "pass, replaced, or released); ask the host for a fresh one"));
  }
  if (state == HandleState::kWrongKind) {
    fail(FX_INVALID_ARGUMENT,
         cat("the ", name, " handle is a handle of another kind (a ",
             kind == HandleKind::kGraph ? "node" : "graph", ")"));
  }
  fail(FX_INVALID_ARGUMENT,
       cat("the ", name, " handle was not made by this host"));
}

}  // namespace fx::host::internal
