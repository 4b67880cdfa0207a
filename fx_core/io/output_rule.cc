#include "fx_core/io/output_rule.h"

#include <filesystem>
#include <system_error>

#include "fx_core/io/regular_file.h"
#include "fx_core/support/strings.h"

namespace fx {

std::string resolved_path(const std::string& path) {
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  if (ec) return path;
  std::filesystem::path resolved =
      std::filesystem::weakly_canonical(absolute, ec);
  return ec ? absolute.lexically_normal().string() : resolved.string();
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
