#include "fx_core/io/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "fx_core/support/strings.h"

namespace fx {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

// Closes the descriptor on every path out.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

absl::StatusOr<int> open_regular_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO without a writer returns at once.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(
        cat("cannot read '", path, "': ", std::strerror(errno)));
  }
  FdCloser closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    return absl::NotFoundError(
        cat("cannot read '", path, "': ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(cat("cannot read '", path,
                                          "': not a regular file (",
                                          kind_of(st.st_mode), ")"));
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    return absl::InternalError(
        cat("cannot read '", path, "': cannot set blocking mode"));
  }
  closer.fd = -1;
  return fd;
}

absl::StatusOr<std::string> read_regular_file(const std::string& path,
                                              uint64_t max_bytes) {
  absl::StatusOr<int> fd = open_regular_file(path);
  if (!fd.ok()) return fd.status();
  FdCloser closer{*fd};
  std::string out;
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(*fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::DataLossError(
          cat("cannot read '", path, "': ", std::strerror(errno)));
    }
    if (n == 0) return out;
    if (static_cast<uint64_t>(n) > max_bytes - out.size()) {
      return absl::InvalidArgumentError(
          cat("cannot read '", path, "': larger than ", max_bytes, " bytes"));
    }
    out.append(buffer, static_cast<size_t>(n));
  }
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 &&
         sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace fx
