#include "fx_core/io/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

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

namespace {

// $FX_MAX_FILE_BYTES when it is a positive integer, else the default.
uint64_t limit_from_environment() {
  const char* text = std::getenv("FX_MAX_FILE_BYTES");
  if (text == nullptr || *text == '\0') return kDefaultMaxFileBytes;
  char* end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0' || value == 0 || text[0] == '-') {
    return kDefaultMaxFileBytes;
  }
  return value;
}

std::atomic<uint64_t>& file_limit() {
  static std::atomic<uint64_t> limit{limit_from_environment()};
  return limit;
}

// A refusal naming the size, the limit and how to raise it.
absl::Status too_large(const std::string& path, uint64_t size, uint64_t limit) {
  return absl::InvalidArgumentError(
      cat("cannot read '", path, "': ", size,
          " bytes is more than the limit of ", limit,
          " bytes (raise it with fx --max-file-bytes N or "
          "FX_MAX_FILE_BYTES)"));
}

}  // namespace

uint64_t max_file_bytes() { return file_limit().load(); }

void set_max_file_bytes(uint64_t bytes) {
  file_limit().store(bytes == 0 ? kDefaultMaxFileBytes : bytes);
}

namespace {

// The size of open file `fd` (`path`), refused when over `max_bytes`.
absl::StatusOr<uint64_t> size_within_limit(int fd, const std::string& path,
                                           uint64_t max_bytes) {
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    return absl::DataLossError(
        cat("cannot read '", path, "': ", std::strerror(errno)));
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes) return too_large(path, size, max_bytes);
  return size;
}

}  // namespace

absl::StatusOr<std::string> read_regular_file(const std::string& path,
                                              uint64_t max_bytes) {
  if (max_bytes == 0) max_bytes = max_file_bytes();
  absl::StatusOr<int> fd = open_regular_file(path);
  if (!fd.ok()) return fd.status();
  FdCloser closer{*fd};
  absl::StatusOr<uint64_t> size = size_within_limit(*fd, path, max_bytes);
  if (!size.ok()) return size.status();
  std::string out;
  try {
    out.reserve(static_cast<size_t>(*size));
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(cat("cannot read '", path, "': its ",
                                            *size,
                                            " bytes do not fit in memory"));
  }
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
      return absl::InvalidArgumentError(cat("cannot read '", path,
                                            "': larger than ", max_bytes,
                                            " bytes (it grew while read)"));
    }
    out.append(buffer, static_cast<size_t>(n));
  }
}

absl::StatusOr<std::unique_ptr<RegularFileReader>> RegularFileReader::open(
    const std::string& path, uint64_t max_bytes) {
  if (max_bytes == 0) max_bytes = max_file_bytes();
  absl::StatusOr<int> fd = open_regular_file(path);
  if (!fd.ok()) return fd.status();
  FdCloser closer{*fd};
  absl::StatusOr<uint64_t> size = size_within_limit(*fd, path, max_bytes);
  if (!size.ok()) return size.status();
  closer.fd = -1;
  return std::unique_ptr<RegularFileReader>(new RegularFileReader(*fd, *size));
}

RegularFileReader::~RegularFileReader() { ::close(fd_); }

size_t RegularFileReader::read(uint64_t pos, void* buf, size_t n) const {
  size_t done = 0;
  while (done < n && pos + done < size_) {
    size_t want =
        static_cast<size_t>(std::min<uint64_t>(n - done, size_ - (pos + done)));
    ssize_t got = ::pread(fd_, static_cast<char*>(buf) + done, want,
                          static_cast<off_t>(pos + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 &&
         sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace fx
