#include "fx_core/io/zip_directory.h"

#include <algorithm>
#include <string>
#include <vector>

#include "fx_core/support/strings.h"

namespace fx {
namespace {

constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kZip64End = 0x06064b50;
constexpr uint32_t kDirectoryEntry = 0x02014b50;
constexpr uint64_t kDeflateRatio = 1032;  // deflate's largest expansion
constexpr size_t kEndSize = 22;
constexpr size_t kMaxComment = 0xFFFF;

uint64_t le(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// The bytes [pos, pos + n), or empty when the archive ends first.
std::vector<unsigned char> bytes_at(const ArchiveRead& read, uint64_t pos,
                                    size_t n) {
  std::vector<unsigned char> out(n);
  if (read(pos, out.data(), n) != n) out.clear();
  return out;
}

struct Directory {
  uint64_t offset = 0;
  uint64_t entries = 0;
  bool found = false;
};

// The central directory's place, from the end record (and the zip64 end
// record it points to), searched for backwards as miniz does.
Directory find_directory(uint64_t size, const ArchiveRead& read) {
  Directory d;
  if (size < kEndSize) return d;
  uint64_t tail = std::min<uint64_t>(size, kEndSize + kMaxComment);
  std::vector<unsigned char> end = bytes_at(read, size - tail, tail);
  if (end.empty()) return d;
  for (size_t i = tail - kEndSize + 1; i-- > 0;) {
    if (le(&end[i], 4) != kEndOfDirectory) continue;
    d.entries = le(&end[i + 10], 2);
    d.offset = le(&end[i + 16], 4);
    d.found = true;
    uint64_t at = size - tail + i;
    if (at >= 20) {
      std::vector<unsigned char> loc = bytes_at(read, at - 20, 20);
      if (!loc.empty() && le(&loc[0], 4) == kZip64Locator) {
        std::vector<unsigned char> z = bytes_at(read, le(&loc[8], 8), 56);
        if (!z.empty() && le(&z[0], 4) == kZip64End) {
          d.entries = le(&z[32], 8);
          d.offset = le(&z[48], 8);
        }
      }
    }
    return d;
  }
  return d;
}

// An entry's sizes: the zip64 extra field's where the entry says 0xFFFFFFFF.
void zip64_sizes(const unsigned char* extra, size_t length,
                 uint64_t* uncompressed, uint64_t* compressed) {
  for (size_t i = 0; i + 4 <= length;) {
    uint64_t id = le(&extra[i], 2), n = le(&extra[i + 2], 2);
    if (i + 4 + n > length) return;
    if (id == 1) {
      size_t at = i + 4;
      if (*uncompressed == 0xFFFFFFFF && at + 8 <= i + 4 + n) {
        *uncompressed = le(&extra[at], 8);
        at += 8;
      }
      if (*compressed == 0xFFFFFFFF && at + 8 <= i + 4 + n) {
        *compressed = le(&extra[at], 8);
      }
      return;
    }
    i += 4 + n;
  }
}

}  // namespace

absl::Status check_zip_directory(uint64_t size, const ArchiveRead& read) {
  Directory d = find_directory(size, read);
  if (!d.found || d.offset >= size) return absl::OkStatus();
  uint64_t pos = d.offset;
  for (uint64_t e = 0; e < d.entries && pos + 46 <= size; ++e) {
    std::vector<unsigned char> h = bytes_at(read, pos, 46);
    if (h.empty() || le(&h[0], 4) != kDirectoryEntry) break;
    uint64_t method = le(&h[10], 2);
    uint64_t compressed = le(&h[20], 4), uncompressed = le(&h[24], 4);
    size_t name_length = le(&h[28], 2), extra_length = le(&h[30], 2);
    size_t comment_length = le(&h[32], 2);
    std::vector<unsigned char> rest =
        bytes_at(read, pos + 46, name_length + extra_length);
    if (rest.size() != name_length + extra_length) break;
    std::string name(rest.begin(), rest.begin() + name_length);
    for (char& c : name) {
      if (c < 0x20 || c > 0x7e) c = '?';  // a message, not the bytes
    }
    zip64_sizes(rest.data() + name_length, extra_length, &uncompressed,
                &compressed);
    uint64_t most = method == 0
                        ? size
                        : std::min<uint64_t>(compressed, size) * kDeflateRatio;
    if (uncompressed > most) {
      return absl::InvalidArgumentError(
          cat("zip entry '", name, "' declares ", uncompressed,
              " bytes, more than the archive's ", size, " bytes can hold",
              method == 0 ? "" : " compressed"));
    }
    pos += 46 + name_length + extra_length + comment_length;
  }
  return absl::OkStatus();
}

}  // namespace fx
