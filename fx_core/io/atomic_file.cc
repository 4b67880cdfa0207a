#include "fx_core/io/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>

#include "fx_core/support/strings.h"

namespace fx {
namespace {

// `path.tmp.PID.N`: unique per process and per call.
std::string temporary_beside(const std::string& path) {
  static std::atomic<int64_t> counter{0};
  return cat(path, ".tmp.", static_cast<int64_t>(::getpid()), ".",
             counter.fetch_add(1, std::memory_order_relaxed));
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

absl::Status write_file_atomically(const std::string& path,
                                   std::string_view contents) {
  if (absl::Status s = check_replaceable(path); !s.ok()) return s;
  std::string tmp = temporary_beside(path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      return absl::PermissionDeniedError(
          cat(path, ": cannot write (", tmp, ")"));
    }
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    if (!out) {
      out.close();
      std::remove(tmp.c_str());
      return absl::DataLossError(cat(path, ": write failed"));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::PermissionDeniedError(cat(path, ": cannot replace the file"));
  }
  return absl::OkStatus();
}

}  // namespace fx
