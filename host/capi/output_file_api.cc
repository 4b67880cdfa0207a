// The FxApi entry of version 13: WriteOutputFile, a file a pass writes (a
// report, a drawing), under the host's one output rule
// (fx_core/io/output_rule.h: never a file the running command reads, as
// the command published them) and written as the host writes every file
// (fx_core/io/atomic_file.h).
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "fx_core/io/atomic_file.h"
#include "fx_core/io/output_rule.h"
#include "host/capi/api_internal.h"

namespace fx::host::internal {

void fill_output_file_entry(FxApi& t) {
  t.WriteOutputFile = [](const char* path, const void* data, size_t size) {
    return guarded("WriteOutputFile", [&] {
      require(path, "path");
      if (*path == '\0') fail(FX_INVALID_ARGUMENT, "path must not be empty");
      if (data == nullptr && size > 0) {
        fail(FX_INVALID_ARGUMENT,
             cat("data must not be NULL (size ", size, ")"));
      }
      const absl::Status rule =
          check_current_output("the pass's output file", path);
      if (!rule.ok()) fail(FX_INVALID_ARGUMENT, std::string(rule.message()));
      const std::string_view bytes(static_cast<const char*>(data),
                                   data == nullptr ? 0 : size);
      const absl::Status written = write_file_atomically(path, bytes);
      if (!written.ok()) {
        // A path the host cannot write (no such directory, no permission,
        // not a regular file) is the caller's argument; only a failed write
        // (a full disk) is the host's.
        fail(absl::IsDataLoss(written) ? FX_INTERNAL : FX_INVALID_ARGUMENT,
             std::string(written.message()));
      }
    });
  };
}

}  // namespace fx::host::internal
