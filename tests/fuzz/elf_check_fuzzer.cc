// Fuzz target: the plugin file check before dlopen
// (fx::host::check_shared_object, host/loader/elf_check.h). The bytes
// are written to a temporary file and checked; the file is never loaded. A
// refusal must carry a message; an accepted file must at least start with
// the ELF magic and hold a whole ELF64 header.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "host/loader/elf_check.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

constexpr size_t kElf64HeaderBytes = 64;

// A file holding `data`, in $TMPDIR (or /tmp), removed by the caller.
std::string write_temporary(const uint8_t* data, size_t size) {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir ? dir : "/tmp") + "/elf_check_XXXXXX";
  int fd = ::mkstemp(path.data());
  fx::fuzz::require(fd >= 0, "cannot create a temporary file");
  size_t written = 0;
  while (written < size) {
    ssize_t n = ::write(fd, data + written, size - written);
    fx::fuzz::require(n > 0, "cannot write the temporary file");
    written += static_cast<size_t>(n);
  }
  ::close(fd);
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = write_temporary(data, size);
  absl::Status checked = fx::host::check_shared_object(path);
  ::unlink(path.c_str());
  fx::fuzz::require_message(checked);
  if (checked.ok()) {
    fx::fuzz::require(size >= kElf64HeaderBytes && std::memcmp(data,
                                                               "\x7f"
                                                               "ELF",
                                                               4) == 0,
                      "accepted a file without a whole ELF header");
  }
  return 0;
}
