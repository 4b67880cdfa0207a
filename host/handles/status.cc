#include "host/handles/status.h"

#include "host/handles/wrap.h"

namespace fx::host {

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
