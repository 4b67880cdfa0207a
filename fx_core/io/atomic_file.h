// fx::write_file_atomically: the one way the SDK writes a file.
//
// The bytes go to a temporary file beside `path` (same directory, so the
// rename cannot cross file systems), which is flushed and then renamed over
// `path`. A reader therefore sees either the old file or the whole new one,
// never a prefix, and a failed write leaves `path` as it was and no
// temporary behind. The new file keeps the permission bits of the file it
// replaces (a 0600 file stays 0600); a new file gets 0666 less the umask, as
// open() gives it. Graph files, bundles, to_folder, torch.save files, pass
// reproducers and the CLI's outputs all go through here.
//
// Threads: safe to call concurrently, also for the same `path` (each call
// has its own temporary; the last rename wins).
#ifndef FX_CORE_IO_ATOMIC_FILE_H_
#define FX_CORE_IO_ATOMIC_FILE_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace fx {

// Replaces (or creates) `path` with `contents`, text or binary. Errors name
// `path`: InvalidArgument when `path` exists and is not a regular file (a
// device such as /dev/full, a FIFO, a directory: never replaced),
// PermissionDenied when the temporary cannot be created or renamed,
// DataLoss when writing it fails (disk full).
absl::Status write_file_atomically(const std::string& path,
                                   std::string_view contents);

// OK when `path` does not exist or is a regular file (what
// write_file_atomically may replace); for writers of several files that
// check every target before writing the first.
absl::Status check_replaceable(const std::string& path);

}  // namespace fx

#endif  // FX_CORE_IO_ATOMIC_FILE_H_
