// Reading files users name: only regular files, and only so much of them.
//
// A path the SDK reads (a graph file, weights, inputs, a pipeline config, a
// plugin) may name a FIFO (opening it blocks until a writer comes), a device
// such as /dev/zero (reading never ends) or a directory. These functions
// open without blocking, refuse anything but a regular file, and stop a read
// that goes past its limit, each with an error naming the path.
#ifndef FX_CORE_IO_REGULAR_FILE_H_
#define FX_CORE_IO_REGULAR_FILE_H_

#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/statusor.h"

namespace fx {

inline constexpr uint64_t kNoSizeLimit = std::numeric_limits<uint64_t>::max();

// An open, blocking file descriptor of a regular file (the caller closes it
// with ::close). NotFound when it cannot be opened, InvalidArgument when it
// is not a regular file ("cannot read '/dev/zero': not a regular file (a
// character device)").
absl::StatusOr<int> open_regular_file(const std::string& path);

// The whole of a regular file. InvalidArgument when it holds more than
// `max_bytes` (or grows past it while being read).
absl::StatusOr<std::string> read_regular_file(
    const std::string& path, uint64_t max_bytes = kNoSizeLimit);

// Whether `a` and `b` both exist and are the same file (device and inode:
// links and different spellings of one path included).
bool same_file(const std::string& a, const std::string& b);

}  // namespace fx

#endif  // FX_CORE_IO_REGULAR_FILE_H_
