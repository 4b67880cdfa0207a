// SHA-256 digests as sha256sum spells them (64 lowercase hex digits), for
// pinning plugin files: the loader hashes a file before loading it.
#ifndef HOST_LOADER_SHA256_H_
#define HOST_LOADER_SHA256_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace fx::host {

std::string sha256_hex(std::string_view bytes);
// The digest of a file's contents; NotFound / Internal naming the path.
absl::StatusOr<std::string> sha256_file(const std::string& path);

}  // namespace fx::host

#endif  // HOST_LOADER_SHA256_H_
