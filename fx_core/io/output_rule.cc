#include "fx_core/io/output_rule.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <memory>

#include "fx_core/io/regular_file.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

std::string current_directory() {
  char buffer[PATH_MAX];
  return ::getcwd(buffer, sizeof buffer) ? std::string(buffer) : ".";
}

// `dir` with its symlinks followed, or as given when it does not exist.
std::string real_directory(const std::string& dir) {
  std::unique_ptr<char, decltype(&::free)> real(
      ::realpath(dir.c_str(), nullptr), &::free);
  return real ? std::string(real.get()) : dir;
}

// `path` absolute with `.` and `..` resolved textually.
std::string normalized(const std::string& path) {
  std::string absolute = !path.empty() && path[0] == '/'
                             ? path
                             : cat(current_directory(), "/", path);
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= absolute.size()) {
    size_t end = absolute.find('/', start);
    if (end == std::string::npos) end = absolute.size();
    std::string part = absolute.substr(start, end - start);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = end + 1;
  }
  std::string out;
  for (const std::string& part : parts) out += "/" + part;
  return out.empty() ? "/" : out;
}

}  // namespace

std::string resolved_path(const std::string& path) {
  std::string full = normalized(path);
  size_t slash = full.rfind('/');
  std::string dir = slash == 0 ? "/" : full.substr(0, slash);
  std::string real = real_directory(dir);
  return (real == "/" ? "" : real) + full.substr(slash);
}

void FilesRead::add(const std::string& path, std::string what) {
  if (!path.empty()) read_.emplace_back(path, std::move(what));
}

absl::Status FilesRead::check_outputs(
    const std::vector<std::pair<std::string, std::string>>& outputs) const {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& [option, output] = outputs[i];
    for (const auto& [path, what] : read_) {
      if (same_file(output, path) ||
          resolved_path(output) == resolved_path(path)) {
        return absl::InvalidArgumentError(
            cat(option, " ", output, " would overwrite ", path, " (", what,
                "), which this command reads; write the output elsewhere"));
      }
    }
    for (size_t j = 0; j < i; ++j) {
      if (same_file(output, outputs[j].second) ||
          resolved_path(output) == resolved_path(outputs[j].second)) {
        return absl::InvalidArgumentError(
            cat(option, " ", output, " and ", outputs[j].first, " ",
                outputs[j].second, " are the same file"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace fx
