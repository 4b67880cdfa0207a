// fx::FilesRead: the files a command reads, and the one rule for what it
// writes (every `fx` command and the bundle writers): an output is never a
// file the command reads nor a file such a file refers to (a bundle's
// weights beside its graph).
//
// Files are compared by what they are, not by how they are spelled: an
// existing output is the same file as an input when both have one device
// and inode (a hard link, a symlink, `..` or `./` spellings); an output
// that does not exist yet cannot be an existing input, and is compared with
// the other outputs of the same write by its absolute path with `.` and
// `..` resolved and its directory's symlinks followed.
#ifndef FX_CORE_IO_OUTPUT_RULE_H_
#define FX_CORE_IO_OUTPUT_RULE_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace fx {

class FilesRead {
 public:
  // `path` is read by the command; `what` names it in a refusal ("the
  // graph", "the weights of a.fx.json"). An empty path is ignored.
  void add(const std::string& path, std::string what);

  // OK when none of `outputs` (each with the option that names it, such as
  // {"-o", "out.fx.json"} or {"-o's weights file", "out.weights.pt"}) is a
  // file read or another of `outputs`. Otherwise InvalidArgument naming the
  // option, the output and the file it would overwrite.
  absl::Status check_outputs(
      const std::vector<std::pair<std::string, std::string>>& outputs) const;

 private:
  std::vector<std::pair<std::string, std::string>> read_;  // path, what
};

// `path` absolute, with `.` and `..` resolved and the symlinks of the part
// of it that exists followed (the file itself need not exist).
std::string resolved_path(const std::string& path);

}  // namespace fx

#endif  // FX_CORE_IO_OUTPUT_RULE_H_
