#include "fx_core/io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "fx_core/support/strings.h"

namespace fx {
namespace {

// `path.tmp.PID.N.R`: unique per process and per call, and R (64 random
// bits) makes the name unpredictable, so no one can plant a symlink or a
// FIFO there beforehand (and O_EXCL | O_NOFOLLOW refuse one if they do).
std::string temporary_beside(const std::string& path) {
  static std::atomic<int64_t> counter{0};
  static thread_local std::mt19937_64 random{std::random_device{}()};
  char suffix[17];
  std::snprintf(suffix, sizeof suffix, "%016llx",
                static_cast<unsigned long long>(random()));
  return cat(path, ".tmp.", static_cast<int64_t>(::getpid()), ".",
             counter.fetch_add(1, std::memory_order_relaxed), ".", suffix);
}

}  // namespace

absl::Status check_replaceable(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        cat(path, ": not a regular file; refusing to replace it"));
  }
  return absl::OkStatus();
}

namespace {

// Creates the temporary `tmp` with the permissions `path`'s replacement must
// have: those of the file it replaces (fchmod, which the umask does not
// narrow), or 0666 less the umask for a new file (open's own rule). -1 on
// failure.
int create_temporary(const std::string& path, const std::string& tmp) {
  struct stat st;
  bool replaces = ::stat(path.c_str(), &st) == 0;
  int fd =
      ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
             replaces ? 0600 : 0666);
  if (fd < 0 || !replaces) return fd;
  if (::fchmod(fd, st.st_mode & 07777) != 0) {
    ::close(fd);
    std::remove(tmp.c_str());
    return -1;
  }
  return fd;
}

// Writes all of `contents` to `fd`; false on any error (a full disk).
bool write_all(int fd, std::string_view contents) {
  while (!contents.empty()) {
    ssize_t n = ::write(fd, contents.data(), contents.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    contents.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

absl::Status write_file_atomically(const std::string& path,
                                   std::string_view contents) {
  if (absl::Status s = check_replaceable(path); !s.ok()) return s;
  std::string tmp = temporary_beside(path);
  int fd = create_temporary(path, tmp);
  if (fd < 0) {
    const int error = errno;
    return absl::PermissionDeniedError(
        cat(path, ": cannot write (", tmp, "): ", std::strerror(error)));
  }
  bool written = write_all(fd, contents);
  if (::close(fd) != 0) written = false;
  if (!written) {
    std::remove(tmp.c_str());
    return absl::DataLossError(cat(path, ": write failed"));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(tmp.c_str());
    return absl::PermissionDeniedError(
        cat(path, ": cannot replace the file: ", std::strerror(error)));
  }
  return absl::OkStatus();
}

}  // namespace fx
