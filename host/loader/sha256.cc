#include "host/loader/sha256.h"

#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "fx_core/io/regular_file.h"
#include "fx_core/support/strings.h"

namespace fx::host {
namespace {

struct DigestContext {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~DigestContext() { EVP_MD_CTX_free(ctx); }
};

std::string to_hex(const unsigned char* digest, unsigned int size) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out(size * 2, '0');
  for (unsigned int i = 0; i < size; ++i) {
    out[2 * i] = kDigits[digest[i] >> 4];
    out[2 * i + 1] = kDigits[digest[i] & 15];
  }
  return out;
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr);
  return to_hex(digest, size);
}

absl::StatusOr<std::string> sha256_file(const std::string& path) {
  // A FIFO or a device would block or never end: regular files only.
  absl::StatusOr<int> fd = open_regular_file(path);
  if (!fd.ok()) return fd.status();
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{*fd};
  DigestContext digest;
  if (digest.ctx == nullptr ||
      EVP_DigestInit_ex(digest.ctx, EVP_sha256(), nullptr) != 1) {
    return absl::InternalError("cannot initialise SHA-256");
  }
  std::vector<char> buffer(1 << 16);
  while (true) {
    ssize_t n = ::read(*fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::InternalError(
          cat("error while reading '", path, "': ", std::strerror(errno)));
    }
    if (n == 0) break;
    EVP_DigestUpdate(digest.ctx, buffer.data(), static_cast<size_t>(n));
  }
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_DigestFinal_ex(digest.ctx, out, &size);
  return to_hex(out, size);
}

}  // namespace fx::host
