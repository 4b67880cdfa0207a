#include "fx_core/io/output_rule.h"

#include <filesystem>
#include <mutex>
#include <optional>
#include <system_error>

#include "fx_core/io/regular_file.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

// The process's current inputs (FilesRead::publish).
struct CurrentInputs {
  std::mutex mutex;
  std::optional<FilesRead> reads;
};

CurrentInputs& current_inputs() {
  static auto* current = new CurrentInputs();  // never destroyed
  return *current;
}

}  // namespace

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

FilesRead::Published FilesRead::publish() const { return Published(*this); }

FilesRead::Published::Published(const FilesRead& reads) {
  CurrentInputs& current = current_inputs();
  std::lock_guard<std::mutex> lock(current.mutex);
  had_previous_ = current.reads.has_value();
  if (had_previous_) previous_ = current.reads->read_;
  current.reads = reads;
}

FilesRead::Published::~Published() {
  CurrentInputs& current = current_inputs();
  std::lock_guard<std::mutex> lock(current.mutex);
  if (!had_previous_) {
    current.reads.reset();
    return;
  }
  current.reads.emplace();
  current.reads->read_ = std::move(previous_);
}

absl::Status check_current_output(const std::string& option,
                                  const std::string& output) {
  CurrentInputs& current = current_inputs();
  std::optional<FilesRead> reads;
  {
    std::lock_guard<std::mutex> lock(current.mutex);
    reads = current.reads;
  }
  if (!reads) return absl::OkStatus();
  return reads->check_outputs({{option, output}});
}

}  // namespace fx
