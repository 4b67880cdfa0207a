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
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace fx {

// An open, blocking file descriptor of a regular file (the caller closes it
// with ::close). NotFound when it cannot be opened, InvalidArgument when it
// is not a regular file ("cannot read '/dev/zero': not a regular file (a
// character device)").
absl::StatusOr<int> open_regular_file(const std::string& path);

// The largest file the SDK reads whole (graph files, torch.save weights and
// inputs), for the whole process: 16 GiB unless $FX_MAX_FILE_BYTES (read
// once, at first use) or set_max_file_bytes (`fx --max-file-bytes N`) says
// otherwise. A larger file is refused, with its size and the limit, before
// anything is allocated for it.
inline constexpr uint64_t kDefaultMaxFileBytes = uint64_t{16} << 30;
uint64_t max_file_bytes();
void set_max_file_bytes(uint64_t bytes);

// The whole of a regular file. InvalidArgument when it holds more than
// `max_bytes` (max_file_bytes() when 0; checked against its size before
// reading, and again while it is read, for a file that grows);
// ResourceExhausted when its size does not fit in memory.
absl::StatusOr<std::string> read_regular_file(const std::string& path,
                                              uint64_t max_bytes = 0);

// A regular file open for positioned reads, for readers that take only the
// parts they need (a torch.save archive's records) instead of the whole
// file: opened and refused as read_regular_file refuses (not a regular file,
// larger than `max_bytes`), of the size it had when opened. Closes on
// destruction.
class RegularFileReader {
 public:
  static absl::StatusOr<std::unique_ptr<RegularFileReader>> open(
      const std::string& path, uint64_t max_bytes = 0);
  ~RegularFileReader();
  RegularFileReader(const RegularFileReader&) = delete;
  RegularFileReader& operator=(const RegularFileReader&) = delete;

  uint64_t size() const { return size_; }
  // Up to `n` bytes at `pos` into `buf`: fewer past the end (or when the
  // file shrank since it was opened, or on a read error).
  size_t read(uint64_t pos, void* buf, size_t n) const;

 private:
  RegularFileReader(int fd, uint64_t size) : fd_(fd), size_(size) {}
  int fd_;
  uint64_t size_;
};

// Whether `a` and `b` both exist and are the same file (device and inode:
// links and different spellings of one path included).
bool same_file(const std::string& a, const std::string& b);

}  // namespace fx

#endif  // FX_CORE_IO_REGULAR_FILE_H_
